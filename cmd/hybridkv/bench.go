package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/bench"
)

func newBenchCmd() *cobra.Command {
	var (
		flags    configFlags
		external bool
		out      string
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark a protocol on a local emulated geo cluster",
		Long: `Run the benchmark workload: start the replicas as separate processes with
wide-area latency emulated between sites (or use a running cluster with
--external), run client sessions at every client site, and print throughput,
latency per operation class, the fast-path ratio, a per-client breakdown and
CPU time. The report is also written as JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts := bench.Options{Config: cfg, Logger: flags.logger(), WorkDir: filepath.Join(out, "logs")}
			if !external {
				if opts.Binary, err = os.Executable(); err != nil {
					return err
				}
			}
			if !quiet {
				opts.Progress = cmd.ErrOrStderr()
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d replicas, %d clients x %d sessions, %.0f ms one way, warm-up %gs, window %gs\n",
					cfg.Protocol, len(cfg.Replicas), len(cfg.Clients.Sites), cfg.Clients.Threads,
					cfg.Network.OneWayMs, cfg.Bench.WarmupS, cfg.Bench.DurationS)
			}
			rep, err := bench.Run(ctx, opts)
			if err != nil {
				return err
			}
			if err := rep.WriteTable(cmd.OutOrStdout()); err != nil {
				return err
			}
			path := bench.ResultPath(out, rep)
			if err := bench.WriteJSON(path, rep); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report written to %s\n", path)
			return nil
		},
	}
	flags.register(cmd.Flags(), true)
	cmd.Flags().BoolVar(&external, "external", false, "use the cluster already running at the configured addresses")
	cmd.Flags().StringVar(&out, "out", "results", "directory for the JSON report and replica logs")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress lines")
	return cmd
}
