package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
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
	"github.com/hybridkv/hybridkv/internal/workload"
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

// sweepParam is a parameter --sweep varies.
type sweepParam struct {
	// name is the parameter's flag, as --sweep names it.
	name string
	// help says what a value is, for --help.
	help string
	// unit labels the figures' axes beside the name; "" for none.
	unit string
	// fractional allows values that are not integers.
	fractional bool
	apply      func(*config.Config, float64)
}

// axis names the parameter on a figure's axis: its name and unit.
func (p *sweepParam) axis() string {
	if p.unit == "" {
		return p.name
	}
	return p.name + " (" + p.unit + ")"
}

// sweepParams are the parameters --sweep varies, in the order the help
// lists them.
var sweepParams = []sweepParam{
	{name: "threads", help: "sessions per client", unit: "sessions per client",
		apply: func(c *config.Config, v float64) { c.Clients.Threads = int(v) }},
	{name: "pendings", help: "operations in flight per session", unit: "in flight per session",
		apply: func(c *config.Config, v float64) { c.Bench.Pendings = int(v) }},
	{name: "batch-delay", help: "leader batching delay, µs", unit: "µs",
		apply: func(c *config.Config, v float64) { c.Raft.BatchDelayUs = int(v) }},
	{name: "weak-ratio", help: "percent of operations that are weak", unit: "%",
		apply: func(c *config.Config, v float64) { c.Bench.WeakRatio = int(v) }},
	{name: "zipf", help: fmt.Sprintf("Zipf skew theta, 0 (uniform) to %v, fractions allowed", workload.MaxZipfSkew), unit: "theta",
		fractional: true, apply: func(c *config.Config, v float64) { c.Bench.ZipfSkew = v }},
	{name: "conflicts", help: "percent of operations on one shared hot key", unit: "%",
		apply: func(c *config.Config, v float64) { c.Bench.Conflicts = int(v) }},
}

// sweepNames lists the parameters' names, for messages.
func sweepNames() string {
	names := make([]string, len(sweepParams))
	for i, p := range sweepParams {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// sweepHelp lists the parameters, one a line, each with what its values
// are.
func sweepHelp() string {
	var b strings.Builder
	for _, p := range sweepParams {
		fmt.Fprintf(&b, "  %-12s %s\n", p.name, p.help)
	}
	return b.String()
}

// sweepSpec is one parameter and the values it takes: values as labels
// and nums as numbers.
type sweepSpec struct {
	param  *sweepParam
	values []string
	nums   []float64
}

func parseSweep(s string) (*sweepSpec, error) {
	if s == "" {
		return nil, nil
	}
	name, list, ok := strings.Cut(s, "=")
	i := slices.IndexFunc(sweepParams, func(p sweepParam) bool { return p.name == name })
	if !ok || i < 0 {
		return nil, fmt.Errorf("--sweep %q: want PARAM=V1,V2,... with PARAM one of %s", s, sweepNames())
	}
	sw := &sweepSpec{param: &sweepParams[i]}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if sw.param.fractional {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x >= 0) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("--sweep %s: %q is not a non-negative number", name, v)
			}
			sw.values = append(sw.values, strconv.FormatFloat(x, 'f', -1, 64))
			sw.nums = append(sw.nums, x)
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--sweep %s: %q is not a non-negative integer", name, v)
		}
		sw.values = append(sw.values, strconv.Itoa(n))
		sw.nums = append(sw.nums, float64(n))
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

// point is the configuration of protocol name at the vi-th value of the
// sweep (without a sweep, vi is 0), and its label: "zipf=1.2", or "".
func (r *benchRun) point(vi int, name string) (config.Config, string) {
	cfg := r.cfg
	cfg.Protocol = name
	if r.sweep == nil {
		return cfg, ""
	}
	r.sweep.param.apply(&cfg, r.sweep.nums[vi])
	return cfg, r.sweep.param.name + "=" + r.sweep.values[vi]
}

func (r *benchRun) run(ctx context.Context) error {
	values := []string{""}
	if r.sweep != nil {
		values = r.sweep.values
	}
	// Every point is checked before the first runs, so that a bad value
	// late in a sweep does not end it after the good ones took minutes.
	for vi := range values {
		for _, name := range r.names {
			cfg, label := r.point(vi, name)
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("invalid configuration for %s %s: %w", name, label, err)
			}
		}
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	var reports []*stats.Report
	var labels []string
	series := make(map[string]*plot.SweepSeries)
	for vi, value := range values {
		for _, name := range r.names {
			cfg, label := r.point(vi, name)
			rep, err := r.one(ctx, cfg, label)
			if err != nil {
				return fmt.Errorf("%s %s: %w", name, label, err)
			}
			reports = append(reports, rep)
			labels = append(labels, label)
			if r.sweep != nil {
				s := series[name]
				if s == nil {
					s = &plot.SweepSeries{Protocol: name, Param: r.sweep.param.axis()}
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
	measured := stem + "-measured.txt"
	if r.check {
		opts.HistoryPath = stem + ".history"
		opts.Measured = func(rep *stats.Report) { r.keepMeasured(rep, label, measured) }
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
	if r.check {
		os.Remove(measured) // the report is out whole, its check included
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
	fmt.Fprintf(out, "peak throughput (average and median latency within 100 ms), sweeping %s:\n", r.sweep.param.axis())
	for _, name := range r.names {
		s := series[name]
		peak := bench.Peak(s.Reports, 100)
		if peak == nil {
			fmt.Fprintf(out, "  %-8s none within the limit\n", name)
			continue
		}
		v := s.Values[slices.Index(s.Reports, peak)]
		fmt.Fprintf(out, "  %-8s %8.0f ops/s at %s=%s (median %.1f ms, average %.1f ms)\n",
			name, peak.Throughput, r.sweep.param.name, v, peak.All.P50Ms, peak.All.AvgMs)
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

// keepMeasured writes a checked run's report to path before its history
// is checked, so that a check that does not finish (minutes for a long
// run; the memory of a long one) leaves the run's measurements behind.
func (r *benchRun) keepMeasured(rep *stats.Report, label, path string) {
	rep.Label = label
	err := writeFile(path, func(f *os.File) error { return rep.WriteTable(f) })
	if !r.quiet {
		if err != nil {
			fmt.Fprintf(r.cmd.ErrOrStderr(), "could not keep the measured report before the check: %v\n", err)
		} else {
			fmt.Fprintf(r.cmd.ErrOrStderr(), "measured; the report until the check is in %s; checking the history\n", path)
		}
	}
}
