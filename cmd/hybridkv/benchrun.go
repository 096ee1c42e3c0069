package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/plot"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// benchRun runs every protocol (and every sweep value) of one bench command.
type benchRun struct {
	cmd      *cobra.Command
	cfg      config.Config
	names    []string
	sweep    *sweepSpec
	dir      string
	external bool
	quiet    bool
	plots    bool
	logger   *slog.Logger
	// crash, when set, kills replica processes mid-run.
	crash *bench.Crash
	// tls runs every link over mutual TLS.
	tls bool
	// check records every run's history and checks it.
	check bool
	// nemesis, when set, injects faults through every run.
	nemesis *bench.Nemesis
	// machineProbe measures the machine's own speed beside every run.
	machineProbe bool
	// api is what the sessions speak (bench.APINative or bench.APIEtcd).
	api string
	// violations counts runs whose check failed.
	violations int
}

// sweepSpec is one parameter and the values it takes.
type sweepSpec struct {
	param  string
	values []string
	apply  func(*config.Config, int)
	ints   []int
}

var sweepParams = map[string]func(*config.Config, int){
	"threads":     func(c *config.Config, v int) { c.Clients.Threads = v },
	"pendings":    func(c *config.Config, v int) { c.Bench.Pendings = v },
	"batch-delay": func(c *config.Config, v int) { c.Raft.BatchDelayUs = v },
	"weak-ratio":  func(c *config.Config, v int) { c.Bench.WeakRatio = v },
}

func parseSweep(s string) (*sweepSpec, error) {
	if s == "" {
		return nil, nil
	}
	param, list, ok := strings.Cut(s, "=")
	apply := sweepParams[param]
	if !ok || apply == nil {
		return nil, fmt.Errorf("--sweep %q: want PARAM=V1,V2,... with PARAM one of threads, pendings, batch-delay, weak-ratio", s)
	}
	sw := &sweepSpec{param: param, apply: apply}
	for _, v := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--sweep %s: %q is not a non-negative integer", param, v)
		}
		sw.values = append(sw.values, strconv.Itoa(n))
		sw.ints = append(sw.ints, n)
	}
	return sw, nil
}

// protocolsToRun resolves --protocol: a list, "all" (every protocol), or
// by default the default ones unless a configuration file names one.
func protocolsToRun(flag string, set bool, file, fromFile string) ([]string, error) {
	switch {
	case set && flag != "all":
		names := strings.Split(flag, ",")
		for _, n := range names {
			if _, err := protocols.Lookup(n); err != nil {
				return nil, fmt.Errorf("--protocol: %w", err)
			}
		}
		return names, nil
	case !set && file != "":
		return []string{fromFile}, nil
	case !set:
		return protocols.DefaultNames(), nil
	}
	return protocols.Names(), nil
}

func (r *benchRun) run(ctx context.Context) error {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	values := []string{""}
	if r.sweep != nil {
		values = r.sweep.values
	}
	var reports []*stats.Report
	var labels []string
	series := make(map[string]*plot.SweepSeries)
	for vi, value := range values {
		for _, name := range r.names {
			cfg := r.cfg
			cfg.Protocol = name
			label := ""
			if r.sweep != nil {
				r.sweep.apply(&cfg, r.sweep.ints[vi])
				label = r.sweep.param + "=" + value
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("invalid configuration for %s %s: %w", name, label, err)
			}
			rep, err := r.one(ctx, cfg, label)
			if err != nil {
				return fmt.Errorf("%s %s: %w", name, label, err)
			}
			reports = append(reports, rep)
			labels = append(labels, label)
			if r.sweep != nil {
				s := series[name]
				if s == nil {
					s = &plot.SweepSeries{Protocol: name, Param: r.sweep.param}
					series[name] = s
				}
				s.Values = append(s.Values, value)
				s.Reports = append(s.Reports, rep)
			}
		}
	}
	return r.summarize(reports, labels, series)
}

// one runs a single benchmark and prints its table.
func (r *benchRun) one(ctx context.Context, cfg config.Config, label string) (*stats.Report, error) {
	// A sweep's runs are told apart by their label: curp-threads-64.
	name := cfg.Protocol
	if label != "" {
		name += "-" + strings.ReplaceAll(label, "=", "-")
	}
	opts := bench.Options{Config: cfg, Logger: r.logger, WorkDir: filepath.Join(r.dir, "logs", name),
		Crash: r.crash, TLS: r.tls, Nemesis: r.nemesis, API: r.api}
	stem := filepath.Join(r.dir, name)
	if r.check {
		opts.HistoryPath = stem + ".history"
	}
	opts.MetricsCSV = stem + "-metrics.csv"
	if !r.external || r.machineProbe {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		if !r.external {
			opts.Binary = self
		}
		if r.machineProbe {
			opts.ProbeBinary = self
		}
	}
	if !r.quiet {
		opts.Progress = r.cmd.ErrOrStderr()
		fmt.Fprintf(r.cmd.ErrOrStderr(), "%s %s: %d replicas, %d clients x %d sessions, %d in flight each, %g ms one way, warm-up %gs, window %gs\n",
			cfg.Protocol, label, len(cfg.Replicas), len(cfg.Clients.Sites), cfg.Clients.Threads, cfg.Bench.Pendings,
			cfg.Network.OneWayMs, cfg.Bench.WarmupS, cfg.Bench.DurationS)
	}
	rep, verdict, err := bench.Run(ctx, opts)
	if err != nil {
		if rep != nil {
			_ = rep.WriteTable(r.cmd.OutOrStdout())
		}
		return nil, err
	}
	if r.check && !verdict.Clean() {
		r.violations++
	}
	rep.Label = label
	out := r.cmd.OutOrStdout()
	if err := rep.WriteTable(out); err != nil {
		return nil, err
	}
	if rep.Timeline != nil && r.plots {
		path := filepath.Join(r.dir, name+"-faults.png")
		if err := plot.Faults(rep, path); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "throughput over time with the faults: %s\n", path)
	}
	if r.check && !verdict.Clean() {
		fmt.Fprintf(out, "CONSISTENCY VIOLATION in %s %s: %s\n", cfg.Protocol, label, verdict.Summary())
	}
	fmt.Fprintln(out)
	if r.plots && rep.OverTime != nil {
		if err := plot.OverTime(rep, stem+"-over-time.png"); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// summarize prints the side-by-side table and writes reports, CSV and plots.
func (r *benchRun) summarize(reports []*stats.Report, labels []string, series map[string]*plot.SweepSeries) error {
	out := r.cmd.OutOrStdout()
	if len(reports) > 1 {
		if err := bench.WriteComparison(out, reports); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(r.dir, "reports.json"), func(f *os.File) error {
		enc := json.NewEncoder(f)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(r.dir, "comparison.csv"), func(f *os.File) error {
		return bench.WriteCSV(f, labels, reports)
	}); err != nil {
		return err
	}
	if r.sweep != nil {
		r.printPeaks(series)
	}
	if r.plots {
		if err := r.draw(reports, series); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "reports, comparison.csv and plots in %s\n", r.dir)
	if r.violations > 0 {
		return fmt.Errorf("%d of %d runs failed the consistency check (see the notes above)", r.violations, len(reports))
	}
	return nil
}

func (r *benchRun) printPeaks(series map[string]*plot.SweepSeries) {
	out := r.cmd.OutOrStdout()
	fmt.Fprintf(out, "peak throughput (average and median latency within 100 ms), sweeping %s:\n", r.sweep.param)
	for _, name := range r.names {
		s := series[name]
		peak := bench.Peak(s.Reports, 100)
		if peak == nil {
			fmt.Fprintf(out, "  %-8s none within the limit\n", name)
			continue
		}
		v := s.Values[slices.Index(s.Reports, peak)]
		fmt.Fprintf(out, "  %-8s %8.0f ops/s at %s=%s (median %.1f ms, average %.1f ms)\n",
			name, peak.Throughput, r.sweep.param, v, peak.All.P50Ms, peak.All.AvgMs)
	}
}

func (r *benchRun) draw(reports []*stats.Report, series map[string]*plot.SweepSeries) error {
	if r.sweep != nil {
		var all []plot.SweepSeries
		for _, name := range r.names {
			all = append(all, *series[name])
		}
		if err := plot.Sweep(all, filepath.Join(r.dir, "sweep.png")); err != nil {
			return err
		}
		// Every swept parameter is a number: each class against it too.
		return plot.SweepValues(all, filepath.Join(r.dir, "sweep-values.png"))
	}
	if err := plot.Classes(reports, filepath.Join(r.dir, "classes.png")); err != nil {
		return err
	}
	if faulted := withTimelines(reports); len(faulted) > 1 {
		path := filepath.Join(r.dir, "recovery.png")
		if err := plot.Recovery(faulted, path); err != nil {
			return err
		}
		fmt.Fprintf(r.cmd.OutOrStdout(), "throughput over time of every run with its faults: %s\n", path)
	}
	return plot.CDFs(reports, filepath.Join(r.dir, "cdf.png"))
}

// withTimelines are the reports of runs that suffered faults, which carry a
// throughput timeline.
func withTimelines(reports []*stats.Report) []*stats.Report {
	var out []*stats.Report
	for _, rep := range reports {
		if rep.Timeline != nil {
			out = append(out, rep)
		}
	}
	return out
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
