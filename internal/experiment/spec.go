package experiment

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/stats"
	"github.com/hybridkv/hybridkv/internal/workload"
)

// Spec is one experiment: which protocols it runs, at which values of one
// parameter, with which fixed settings, what it draws and what of the
// prototype's published results it compares with.
type Spec struct {
	Name string
	// Question is what the experiment answers, for the summary.
	Question string
	// Protocols lists the protocols the experiment runs.
	Protocols func() []string
	// Param names the parameter varied, as bench's flag does; Values are
	// its values in a full run and QuickValues under --quick. An
	// experiment with no parameter (Param empty) runs one point per
	// protocol.
	Param       string
	Unit        string
	Values      []float64
	QuickValues []float64
	// Categories, when set, name the parameter's values: value i stands
	// for Categories[i] (a workload, say), and figures label the axis
	// with the names.
	Categories []string
	// Apply sets the parameter in a configuration.
	Apply func(c *config.Config, v float64)
	// Setup fixes everything else the experiment holds constant; quick
	// shortens the runs.
	Setup func(c *config.Config, quick bool)
	// Flags are the bench flags Setup amounts to, for the summary's
	// commands.
	Flags func(quick bool) string
	// Crash, when set, kills replicas during every run.
	Crash func(quick bool) *bench.Crash
	// Metrics are drawn against the parameter, one panel each; a
	// timeline experiment draws throughput over time instead.
	Metrics  []Metric
	Timeline bool
	// Peak reports each protocol's peak throughput under bench's 100 ms
	// rule over the parameter's values, per repeat.
	Peak bool
	// Relative are metrics the summary also gives as ratios to their
	// value at the parameter's first value: how far each moved.
	Relative []Metric
	// Published are the prototype's numbers this experiment can be set
	// beside, and Differences what keeps the setups from corresponding.
	Published   []Published
	Differences string
}

// Metric is one number a run reports, drawn in a panel and kept in the CSV.
type Metric struct {
	Column string // the CSV column
	Title  string // the panel's title
	Unit   string
	Log    bool
	// Of returns the metric of a run; false when the run has none (no
	// strong operations, say).
	Of func(*stats.Report) (float64, bool)
}

// Published is a number from the prototype's evaluation: a protocol's
// metric, at a value of the parameter when it was measured at one
// (NaN otherwise), as one number or a range.
type Published struct {
	Protocol string
	Column   string
	At       float64
	Lo, Hi   float64
	Source   string
}

// The metrics experiments draw.
var (
	Throughput = Metric{Column: "throughput", Title: "throughput", Unit: "ops/s",
		Of: func(r *stats.Report) (float64, bool) { return r.Throughput, true }}
	AllP50 = latency("all_p50_ms", "median latency, all operations", func(r *stats.Report) stats.ClassSummary { return r.All },
		func(c stats.ClassSummary) float64 { return c.P50Ms })
	StrongP50  = latency("strong_p50_ms", "strong p50", strong, func(c stats.ClassSummary) float64 { return c.P50Ms })
	StrongP99  = latency("strong_p99_ms", "strong p99", strong, func(c stats.ClassSummary) float64 { return c.P99Ms })
	StrongP999 = latency("strong_p999_ms", "strong p99.9", strong, func(c stats.ClassSummary) float64 { return c.P999Ms })
	WeakP50    = latency("weak_p50_ms", "weak p50", weak, func(c stats.ClassSummary) float64 { return c.P50Ms })
	WeakP99    = latency("weak_p99_ms", "weak p99", weak, func(c stats.ClassSummary) float64 { return c.P99Ms })
	FastPath   = Metric{Column: "fast_path_pct", Title: "fast-path ratio", Unit: "%",
		Of: func(r *stats.Report) (float64, bool) { return 100 * r.FastPathRatio, r.FastPathKnown }}
	CPUPerOp = Metric{Column: "cpu_us_per_op", Title: "CPU per operation", Unit: "µs",
		Of: func(r *stats.Report) (float64, bool) { return r.CPUMicrosPerOp, r.CPUMicrosPerOp > 0 }}
)

// The per-class latencies the tao experiment draws: a scan of hundreds of
// keys and a single-key read of the same level lie far apart, so each
// class gets its own.
var (
	WeakScanP50    = classLatency(stats.WeakScan, "p50", func(c stats.ClassSummary) float64 { return c.P50Ms })
	WeakScanP99    = classLatency(stats.WeakScan, "p99", func(c stats.ClassSummary) float64 { return c.P99Ms })
	WeakReadP50    = classLatency(stats.WeakRead, "p50", func(c stats.ClassSummary) float64 { return c.P50Ms })
	WeakReadP99    = classLatency(stats.WeakRead, "p99", func(c stats.ClassSummary) float64 { return c.P99Ms })
	StrongReadP50  = classLatency(stats.StrongRead, "p50", func(c stats.ClassSummary) float64 { return c.P50Ms })
	StrongReadP99  = classLatency(stats.StrongRead, "p99", func(c stats.ClassSummary) float64 { return c.P99Ms })
	StrongWriteP50 = classLatency(stats.StrongWrite, "p50", func(c stats.ClassSummary) float64 { return c.P50Ms })
	StrongWriteP99 = classLatency(stats.StrongWrite, "p99", func(c stats.ClassSummary) float64 { return c.P99Ms })
)

func strong(r *stats.Report) stats.ClassSummary { return r.Strong }
func weak(r *stats.Report) stats.ClassSummary   { return r.Weak }

func latency(column, title string, class func(*stats.Report) stats.ClassSummary, of func(stats.ClassSummary) float64) Metric {
	return Metric{Column: column, Title: title, Unit: "ms", Log: true, Of: func(r *stats.Report) (float64, bool) {
		c := class(r)
		return of(c), c.Count > 0
	}}
}

// classLatency is a latency of one class of operations, its column named
// after the class ("weak_scan_p50_ms").
func classLatency(c stats.Class, pct string, of func(stats.ClassSummary) float64) Metric {
	column := strings.ReplaceAll(c.String(), "-", "_") + "_" + pct + "_ms"
	return latency(column, c.String()+" "+pct, func(r *stats.Report) stats.ClassSummary { return r.Classes[c.String()] }, of)
}

// csvMetrics are the columns every experiment's CSV carries.
var csvMetrics = []Metric{Throughput, AllP50, StrongP50, StrongP99, StrongP999, WeakP50, WeakP99, FastPath, CPUPerOp}

// hybrids are the protocols with a weak path: those the T property is
// about.
func hybrids() []string {
	var out []string
	for _, name := range protocols.Names() {
		if p, err := protocols.Lookup(name); err == nil && !p.WeakAsStrong {
			out = append(out, name)
		}
	}
	return out
}

// taoProtocols are the protocols the tao experiment compares: every one
// with a weak path, and Raft and CURP, which serve weak operations as
// strong ones, as the baselines that show what the weak path saves.
func taoProtocols() []string {
	return slices.DeleteFunc(protocols.Names(), func(name string) bool {
		p, err := protocols.Lookup(name)
		return err != nil || p.WeakAsStrong && name != "raft" && name != "curp"
	})
}

// taoKeys is the tao experiment's key space, every key preloaded: TAO's
// million, or under --quick a tenth, which preloads in under ten seconds
// where a million take 45 to 75 on a 2-core machine.
func taoKeys(quick bool) uint64 {
	if quick {
		return 100_000
	}
	return 1_000_000
}

// timing sets a run's warm-up and measured window: bench's defaults, or
// under --quick a window long enough for a few hundred operations per
// session and far too short to trust a tail.
func timing(c *config.Config, quick bool) {
	c.Bench.WarmupS, c.Bench.DurationS = 3, 15
	if quick {
		c.Bench.WarmupS, c.Bench.DurationS = 1, 3
	}
}

func timingFlags(quick bool) string {
	if quick {
		return "--warmup 1 --duration 3"
	}
	return "--warmup 3 --duration 15"
}

// Specs are every experiment, in the order `all` runs them.
var Specs = []Spec{
	{
		Name: "t-property",
		Question: "Does a strong operation's latency stay put as the share of weak operations grows " +
			"(the T property: strong operations neither wait for nor are slowed by weak ones)?",
		Protocols:   hybrids,
		Param:       "weak-ratio",
		Unit:        "%",
		Values:      []float64{0, 25, 50, 75, 90, 99},
		QuickValues: []float64{0, 50, 99},
		Apply:       func(c *config.Config, v float64) { c.Bench.WeakRatio = int(v) },
		Setup: func(c *config.Config, quick bool) {
			c.Clients.Threads, c.Bench.Pendings, c.Raft.BatchDelayUs = 32, 15, 150
			timing(c, quick)
		},
		Flags:    func(quick bool) string { return "--threads 32 --pendings 15 --batch-delay 150 " + timingFlags(quick) },
		Metrics:  []Metric{StrongP50, StrongP99, Throughput, WeakP50},
		Relative: []Metric{StrongP50, StrongP99},
		Published: []Published{
			{Protocol: "curp-ho", Column: "strong_p99_ms", At: 25, Lo: 1400, Hi: 1700, Source: "its CURP-HO strong p99 at 25–50 % weak"},
			{Protocol: "curp-ho", Column: "strong_p99_ms", At: 50, Lo: 1400, Hi: 1700, Source: "its CURP-HO strong p99 at 25–50 % weak"},
			{Protocol: "curp-ht", Column: "strong_p99_ms", At: 25, Lo: 85, Hi: 158, Source: "its CURP-HT strong p99 at 25–50 % weak"},
			{Protocol: "curp-ht", Column: "strong_p99_ms", At: 50, Lo: 85, Hi: 158, Source: "its CURP-HT strong p99 at 25–50 % weak"},
		},
		Differences: "The prototype's figures came from five machines; ours from one machine, its sites emulated with 25 ms one way " +
			"between them, replicas and clients sharing its cores.",
	},
	{
		Name:        "conflict",
		Question:    "What do conflicting operations (a share of them on one hot key) cost each protocol's fast path and latency?",
		Protocols:   protocols.Names,
		Param:       "conflicts",
		Unit:        "%",
		Values:      []float64{0, 2, 10, 25, 50, 100},
		QuickValues: []float64{0, 25, 100},
		Apply:       func(c *config.Config, v float64) { c.Bench.Conflicts = int(v) },
		Setup: func(c *config.Config, quick bool) {
			c.Clients.Threads, c.Bench.Pendings = 8, 4
			timing(c, quick)
		},
		Flags:       func(quick bool) string { return "--threads 8 --pendings 4 " + timingFlags(quick) },
		Metrics:     []Metric{Throughput, StrongP50, StrongP99, FastPath},
		Differences: "The prototype's conflict sweep published no table to set beside this one.",
	},
	{
		Name:      "failure",
		Question:  "What does each protocol's throughput do when the leader's process is killed, and how long until strong operations complete again?",
		Protocols: protocols.Names,
		Setup: func(c *config.Config, quick bool) {
			c.Clients.Threads, c.Bench.Pendings = 8, 4
			c.Bench.WarmupS, c.Bench.DurationS = 3, 30
			if quick {
				c.Bench.DurationS = 12
			}
		},
		Flags: func(quick bool) string {
			if quick {
				return "--threads 8 --pendings 4 --warmup 3 --duration 12 --kill-leader 7s --restart-after 4s"
			}
			return "--threads 8 --pendings 4 --warmup 3 --duration 30 --kill-leader 13s --restart-after 8s"
		},
		Crash: func(quick bool) *bench.Crash {
			if quick {
				return &bench.Crash{Target: "leader", After: 7 * time.Second, RestartAfter: 4 * time.Second}
			}
			return &bench.Crash{Target: "leader", After: 13 * time.Second, RestartAfter: 8 * time.Second}
		},
		Metrics:     []Metric{Throughput},
		Timeline:    true,
		Differences: "The prototype's failure experiment published no numbers to set beside these.",
	},
	{
		Name:        "ycsb",
		Question:    "How does each protocol fare on YCSB's core workloads, with half of every workload's operations weak?",
		Protocols:   protocols.Names,
		Param:       "ycsb",
		Unit:        "core workload",
		Categories:  ycsbWorkloads,
		Values:      indices(len(ycsbWorkloads)),
		QuickValues: indicesOf(ycsbWorkloads, "a", "d", "e", "f"), // updates, inserts, scans, read-modify-writes
		Apply:       func(c *config.Config, v float64) { c.Bench.YCSB = ycsbWorkloads[int(v)] },
		// YCSB loads its records before it runs a workload: every key is
		// preloaded, so reads find values and E's scans return keys.
		Setup: func(c *config.Config, quick bool) {
			c.Clients.Threads, c.Bench.Pendings, c.Bench.WeakRatio = 8, 4, 50
			c.Bench.KeySpace, c.Bench.Preload = ycsbKeys(quick), true
			timing(c, quick)
		},
		Flags: func(quick bool) string {
			return fmt.Sprintf("--threads 8 --pendings 4 --weak-ratio 50 --keys %d --preload %s", ycsbKeys(quick), timingFlags(quick))
		},
		Metrics: []Metric{Throughput, StrongP50, StrongP99, WeakP50},
		Differences: "The prototype published no YCSB A–F results; its cross-protocol comparison used a YCSB-B-like mix " +
			"(the cross experiment).",
	},
	{
		Name:      "cross",
		Question:  "Which protocol sustains the most throughput on a YCSB-B mix with half the operations weak, five replicas?",
		Protocols: protocols.Names,
		Param:     "threads",
		Unit:      "sessions per client",
		// Five replicas and five clients share the machine's cores: at
		// 5 × 64 sessions every protocol's median had passed 100 ms on
		// the 2-core machine, so more sessions add no peak.
		Values:      []float64{8, 16, 32, 64},
		QuickValues: []float64{8, 32},
		Apply:       func(c *config.Config, v float64) { c.Clients.Threads = int(v) },
		Setup: func(c *config.Config, quick bool) {
			c.Resize(5)
			c.Bench.Pendings, c.Raft.BatchDelayUs = 15, 150
			c.Bench.WeakRatio, c.Bench.Writes, c.Bench.WeakWrites = 50, 5, 5
			timing(c, quick)
		},
		Flags: func(quick bool) string {
			return "--replicas 5 --pendings 15 --batch-delay 150 --weak-ratio 50 --writes 5 --weak-writes 5 " + timingFlags(quick)
		},
		Metrics: []Metric{Throughput, AllP50, StrongP99},
		Peak:    true,
		Published: []Published{
			{Protocol: "curp-ho", Column: "peak", At: math.NaN(), Lo: 54745, Hi: 54745, Source: "5 machines"},
			{Protocol: "curp-ht", Column: "peak", At: math.NaN(), Lo: 54354, Hi: 54354, Source: "5 machines"},
			{Protocol: "raft-ht", Column: "peak", At: math.NaN(), Lo: 38205, Hi: 38205, Source: "5 machines"},
			{Protocol: "pileus-ht", Column: "peak", At: math.NaN(), Lo: 38076, Hi: 38076, Source: "5 machines"},
			{Protocol: "pileus", Column: "peak", At: math.NaN(), Lo: 35474, Hi: 35474, Source: "5 machines"},
			{Protocol: "mongo", Column: "peak", At: math.NaN(), Lo: 34139, Hi: 34139, Source: "5 machines; its MongoDB-tunable"},
			{Protocol: "curp", Column: "peak", At: math.NaN(), Lo: 31558, Hi: 31558, Source: "5 machines"},
			{Protocol: "raft", Column: "peak", At: math.NaN(), Lo: 21952, Hi: 21952, Source: "5 machines"},
		},
		Differences: "The prototype's peaks came from five machines, one replica each; ours from one 2-core machine running " +
			"all five replicas and five client processes, so CPU, not the network, sets our peaks.",
	},
	{
		Name: "tao",
		Question: "How does each protocol serve a TAO-like social-graph mix over a preloaded store: 1 % strong writes, " +
			"4 % strong reads, 95 % weak reads of which 44 % scan 1–1000 keys, keys Zipfian (0.8)?",
		Protocols: taoProtocols,
		Setup: func(c *config.Config, quick bool) {
			c.Clients.Threads, c.Bench.Pendings = 8, 4
			c.Bench.Mix, c.Bench.KeySpace, c.Bench.ZipfSkew, c.Bench.Preload = workload.MixTAO, taoKeys(quick), 0.8, true
			timing(c, quick)
		},
		Flags: func(quick bool) string {
			return fmt.Sprintf("--threads 8 --pendings 4 --mix %s --keys %d --zipf 0.8 --preload %s",
				workload.MixTAO, taoKeys(quick), timingFlags(quick))
		},
		Metrics: []Metric{Throughput, WeakScanP50, WeakScanP99, WeakReadP50, WeakReadP99,
			StrongReadP50, StrongReadP99, StrongWriteP50, StrongWriteP99},
		Differences: "No published numbers are set beside these. Every replica and client here shares one 2-core machine: " +
			"a scan's cost (up to a thousand keys read and sent) lands on the same cores as every other operation's.",
	},
}

// ycsbKeys is the ycsb experiment's key space, every key loaded first: a
// tenth of the default million, which loads in a few seconds, or under
// --quick a fiftieth, which loads in about one.
func ycsbKeys(quick bool) uint64 {
	if quick {
		return 20_000
	}
	return 100_000
}

// ycsbWorkloads are the YCSB core workloads the ycsb experiment runs, in
// the order of its axis.
var ycsbWorkloads = workload.YCSBWorkloads()

// indices are 0 .. n-1, the values of a parameter with n categories.
func indices(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

// indicesOf are the positions of names in all.
func indicesOf(all []string, names ...string) []float64 {
	var out []float64
	for _, n := range names {
		out = append(out, float64(slices.Index(all, n)))
	}
	return out
}

// Lookup returns the experiment called name.
func Lookup(name string) (Spec, error) {
	for _, s := range Specs {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("no experiment %q: want one of %s, or all", name, strings.Join(Names(), ", "))
}

// Names lists the experiments.
func Names() []string {
	var out []string
	for _, s := range Specs {
		out = append(out, s.Name)
	}
	return out
}

// values are the parameter's values for this run of the experiment: one
// placeholder, 0, when it has none.
func (s Spec) values(quick bool) []float64 {
	switch {
	case s.Param == "":
		return []float64{0}
	case quick:
		return s.QuickValues
	}
	return s.Values
}

// label names a point's value: "weak-ratio=50", or "" without a
// parameter.
func (s Spec) label(v float64) string {
	if s.Param == "" {
		return ""
	}
	return s.Param + "=" + s.valueName(v)
}

// valueName writes a value of the parameter: the category it stands for,
// or the number.
func (s Spec) valueName(v float64) string {
	if i := int(v); s.Categories != nil && float64(i) == v && i >= 0 && i < len(s.Categories) {
		return s.Categories[i]
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// protocolsOf returns the protocols to run: the experiment's own, or
// those of only that are among them.
func (s Spec) protocolsOf(only []string) []string {
	names := s.Protocols()
	if len(only) == 0 {
		return names
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(only, n) })
}
