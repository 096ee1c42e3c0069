package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hybridkv/hybridkv/internal/bench"
)

func newBenchCmd() *cobra.Command {
	var (
		flags    configFlags
		external bool
		out      string
		quiet    bool
		sweep    string
		noPlots  bool
		kills    crashFlags
		check    bool
		useTLS   bool
		nemesis  string
		probe    bool
		api      string
	)
	flags.protocolList = true
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark protocols side by side on a local emulated geo cluster",
		Long: `Run the benchmark workload on each protocol in turn: start the replicas as
separate processes with wide-area latency emulated between sites (or use a
running cluster with --external), run client sessions at every client site,
and print throughput, latency per operation class, the fast-path ratio, a
per-client breakdown, CPU time and how the run developed over time (the
replicas' metrics are scraped every second), then one side-by-side table.
Reports go to --out as JSON and CSV, with plots; each run's scraped metrics
go to PROTOCOL-metrics.csv and its timeline to PROTOCOL-over-time.png.

With no --protocol and no configuration file, the default protocols run;
--protocol all runs every one.
--sweep PARAM=V1,V2,... repeats the runs for each value of one parameter,
reports each protocol's peak throughput (the highest whose average and median
latency stay within 100 ms) and plots every class against the values. PARAM
is one of:
` + sweepHelp(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			names, err := protocolsToRun(flags.protocol, cmd.Flags().Changed("protocol"), flags.file, cfg.Protocol)
			if err != nil {
				return err
			}
			sw, err := parseSweep(sweep)
			if err != nil {
				return err
			}
			if sw != nil && sw.param.name == "weak-ratio" && cfg.Bench.Mix != "" {
				return fmt.Errorf("--sweep weak-ratio: the %s mix fixes every operation's level", cfg.Bench.Mix)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			crash, err := kills.crash()
			if err != nil {
				return err
			}
			nem, err := bench.ParseNemesis(nemesis, cfg.Bench.Seed)
			if err != nil {
				return err
			}
			dir := filepath.Join(out, time.Now().Format("20060102-150405"))
			r := benchRun{cmd: cmd, cfg: cfg, names: names, sweep: sw, dir: dir, external: external,
				quiet: quiet, plots: !noPlots, logger: flags.logger(), crash: crash, check: check, tls: useTLS,
				nemesis: nem, machineProbe: probe, api: api}
			return r.run(ctx)
		},
	}
	flags.register(cmd.Flags(), true)
	cmd.Flags().BoolVar(&external, "external", false, "use the cluster already running at the configured addresses")
	cmd.Flags().StringVar(&out, "out", "results", "directory for reports, tables, plots and replica logs")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress lines")
	cmd.Flags().StringVar(&sweep, "sweep", "", "PARAM=V1,V2,... with PARAM one of "+sweepNames())
	cmd.Flags().BoolVar(&noPlots, "no-plots", false, "skip drawing plots")
	kills.register(cmd)
	cmd.Flags().BoolVar(&useTLS, "tls", false, "run every link over mutual TLS, with certificates generated for the run")
	cmd.Flags().StringVar(&api, "api", bench.APINative, "what the sessions speak: native (hybridkv's client) or etcd (etcd's Go client through a gateway at each client site; see docs/etcd.md)")
	cmd.Flags().BoolVar(&check, "check", false, "record every operation and check the history for consistency violations")
	cmd.Flags().BoolVar(&probe, "machine-probe", false, "measure the machine's own memory and core speed beside each run, at the lowest priority, "+
		"and show them per interval in the over-time section: tells a run that slowed from a machine that did")
	cmd.Flags().StringVar(&nemesis, "nemesis", "", "inject faults through each run, drawn from --seed: a list of "+
		strings.Join(bench.NemesisKinds, ",")+"; reports unavailability per fault and plots throughput over time")
	return cmd
}

// crashFlags choose one replica crash for a run.
type crashFlags struct {
	leader, follower, all, restart time.Duration
}

func (f *crashFlags) register(cmd *cobra.Command) { f.registerOn(cmd.Flags()) }

func (f *crashFlags) registerOn(fs *pflag.FlagSet) {
	fs.DurationVar(&f.leader, "kill-leader", 0, "SIGKILL the leader's process this long after the start, and report the outage")
	fs.DurationVar(&f.follower, "kill-follower", 0, "SIGKILL a follower's process this long after the start")
	fs.DurationVar(&f.all, "kill-all", 0, "SIGKILL every replica's process this long after the start (a power cut)")
	fs.DurationVar(&f.restart, "restart-after", 0, "restart the killed replicas from their data directories this long after the kill")
}

func (f *crashFlags) crash() (*bench.Crash, error) {
	var crashes []*bench.Crash
	for _, c := range []bench.Crash{{Target: "leader", After: f.leader}, {Target: "follower", After: f.follower}, {Target: "all", After: f.all}} {
		if c.After > 0 {
			c.RestartAfter = f.restart
			crashes = append(crashes, &c)
		}
	}
	switch {
	case len(crashes) > 1:
		return nil, errors.New("give one of --kill-leader, --kill-follower and --kill-all")
	case len(crashes) == 0 && f.restart > 0:
		return nil, errors.New("--restart-after needs --kill-leader, --kill-follower or --kill-all")
	case len(crashes) == 0:
		return nil, nil
	}
	return crashes[0], nil
}
