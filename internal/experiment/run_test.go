package experiment

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// fakeRuns stands in for the benchmark: each run reports numbers made from
// its point, so the tests can tell which point a row came from.
type fakeRuns struct {
	ran     []Job
	failAt  int // the run, counted from 1, that fails; 0 never
	violate string
	build   string // "" is "test"
}

func (f *fakeRuns) run(_ context.Context, j Job) (Result, error) {
	f.ran = append(f.ran, j)
	if len(f.ran) == f.failAt {
		return Result{}, errors.New("interrupted")
	}
	thr := 1000*float64(len(j.Protocol)) + 10*float64(j.Config.Bench.WeakRatio) + float64(j.Run)
	rep := &stats.Report{Protocol: j.Protocol, Replicas: len(j.Config.Replicas), Clients: len(j.Config.Clients.Sites),
		SessionsPerClient: j.Config.Clients.Threads, Ops: 100, Throughput: thr,
		All:    stats.ClassSummary{Count: 100, P50Ms: 10, AvgMs: 12},
		Strong: stats.ClassSummary{Count: 50, P50Ms: 50 + float64(j.Run), P99Ms: 100 + float64(j.Config.Bench.WeakRatio)},
		Weak:   stats.ClassSummary{Count: 50, P50Ms: 0.5, P99Ms: 2}}
	res := Result{Report: rep, Checked: f.violate != "", Build: cmp.Or(f.build, "test")}
	if j.Protocol == f.violate {
		res.Violation = "stale read"
	}
	return res, nil
}

// testSpec is a small experiment over two protocols and two weak shares.
func testSpec() Spec {
	s, _ := Lookup("t-property")
	s.Protocols = func() []string { return []string{"curp-ho", "raft-ht"} }
	s.QuickValues = []float64{0, 50}
	return s
}

func testOptions(t *testing.T, f *fakeRuns) Options {
	var now time.Time
	return Options{Base: config.Default(), Dir: t.TempDir(), Runs: 2, Quick: true, Command: "hybridkv experiment t-property --quick --runs 2",
		Build: "test", Machine: "test machine", Run: f.run,
		Now: func() time.Time { now = now.Add(10 * time.Second); return now }}
}

func TestRunAlternatesRoundsAndWritesEverything(t *testing.T) {
	f := &fakeRuns{}
	o := testOptions(t, f)
	var progress bytes.Buffer
	o.Progress = &progress
	res, err := Run(context.Background(), testSpec(), o)
	require.NoError(t, err)
	require.Equal(t, 8, res.Runs)

	var order []string
	for _, j := range f.ran {
		order = append(order, fmt.Sprintf("%s/%d/%d", j.Protocol, j.Config.Bench.WeakRatio, j.Run))
		require.Equal(t, 32, j.Config.Clients.Threads, "the experiment's settings")
		require.Equal(t, 15, j.Config.Bench.Pendings)
	}
	require.Equal(t, []string{"curp-ho/0/1", "raft-ht/0/1", "curp-ho/50/1", "raft-ht/50/1",
		"curp-ho/0/2", "raft-ht/0/2", "curp-ho/50/2", "raft-ht/50/2"}, order,
		"every point's first run before any second")

	for _, name := range []string{"t-property.csv", "t-property.png", "t-property.md", "settings.json"} {
		_, err := os.Stat(filepath.Join(res.Dir, name))
		require.NoError(t, err, name)
	}
	rows := readCSV(t, filepath.Join(res.Dir, "t-property.csv"))
	require.Len(t, rows, 9)
	require.Equal(t, []string{"t-property", "curp-ho", "weak-ratio", "0", "1"}, rows[1][:5])

	md := readFile(t, filepath.Join(res.Dir, "t-property.md"))
	require.Contains(t, md, "hybridkv bench --protocol P --weak-ratio V --threads 32 --pendings 15 --batch-delay 150 --warmup 1 --duration 3")
	// curp-ho at 50 %: strong p99 150 in both runs, against the
	// prototype's 1,400–1,700 ms.
	require.Contains(t, md, "| curp-ho | strong_p99_ms at weak-ratio=50 | 1,400–1,700")
	require.Contains(t, md, "| 150 | 0.0882–0.107 |")
	// Throughput's spread over the two runs.
	require.Contains(t, md, "| curp-ho | 50 | 7,502 (7,501–7,502) |")
	require.Contains(t, md, "No run's history was checked")
	require.Contains(t, md, "- Build: test\n")
	// The fake's strong p50 is 50 plus the run's number, the same mean at
	// both shares; its p99 is 100 plus the weak share: 100, then 150.
	require.Contains(t, md, "| curp-ho | strong p50 | 1.00× |")
	require.Contains(t, md, "| curp-ho | strong p99 | 1.50× |")
	require.Contains(t, progress.String(), "[8/8] t-property raft-ht weak-ratio=50 run 2")
	require.Contains(t, progress.String(), "[1/8] t-property curp-ho weak-ratio=0 run 1: 7001 ops/s, 0 failed (10s); 7 left, about 1m10s")
}

func TestRunResumesWhereItStopped(t *testing.T) {
	f := &fakeRuns{failAt: 3}
	o := testOptions(t, f)
	_, err := Run(context.Background(), testSpec(), o)
	require.ErrorContains(t, err, "interrupted")

	cancelled, cancel := context.WithCancel(context.Background())
	o.Run = func(ctx context.Context, j Job) (Result, error) {
		cancel()
		return Result{}, ctx.Err()
	}
	_, err = Run(cancelled, testSpec(), o)
	require.ErrorContains(t, err, "interrupted during curp-ho weak-ratio=50 run 1, with 2 of 8 runs done; run the same command again to resume")

	again := &fakeRuns{build: "later"}
	o.Run = again.run
	var progress bytes.Buffer
	o.Progress = &progress
	res, err := Run(context.Background(), testSpec(), o)
	require.NoError(t, err)
	require.Len(t, again.ran, 6, "the two finished runs are not run again")
	require.Equal(t, "curp-ho", again.ran[0].Protocol)
	require.Equal(t, 50, again.ran[0].Config.Bench.WeakRatio)
	require.Contains(t, progress.String(), "2 of 8 runs already done, resuming with 6")
	require.Len(t, readCSV(t, filepath.Join(res.Dir, "t-property.csv")), 9)
	require.Contains(t, readFile(t, filepath.Join(res.Dir, "t-property.md")), "- Build: test (2 runs), later (6 runs)")

	// Done: nothing runs, the outputs are written again.
	third := &fakeRuns{}
	o.Run = third.run
	_, err = Run(context.Background(), testSpec(), o)
	require.NoError(t, err)
	require.Empty(t, third.ran)
}

func TestRunRefusesToMixSettings(t *testing.T) {
	f := &fakeRuns{}
	o := testOptions(t, f)
	_, err := Run(context.Background(), testSpec(), o)
	require.NoError(t, err)
	// A setting a later build added, missing from the file, is its
	// default: the runs still resume.
	path := filepath.Join(o.Dir, "t-property-quick", "settings.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), `"YCSBWeak": null,`)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), `"YCSBWeak": null,`, "", 1)), 0o644))
	_, err = Run(context.Background(), testSpec(), o)
	require.NoError(t, err)

	o.Base.Network.OneWayMs = 50
	_, err = Run(context.Background(), testSpec(), o)
	require.ErrorContains(t, err, "holds runs made with other settings")
	// A longer --duration given on the command line is a setting too.
	o.Base.Network.OneWayMs = 25
	o.Overlay = func(c *config.Config) { c.Bench.DurationS = 60 }
	_, err = Run(context.Background(), testSpec(), o)
	require.ErrorContains(t, err, "holds runs made with other settings")
}

// TestRunKeepsItsBaseWhateverARunDoes: a run that rewrites its
// configuration's addresses (a local run draws free ports) leaves the
// experiments after it the settings they started with; it did not, and
// the next experiment of `all` recorded one run's ports, which no later
// invocation matched, so it refused to resume.
func TestRunKeepsItsBaseWhateverARunDoes(t *testing.T) {
	f := &fakeRuns{}
	o := testOptions(t, f)
	o.Run = func(ctx context.Context, j Job) (Result, error) {
		for i := range j.Config.Replicas {
			j.Config.Replicas[i].Addr = fmt.Sprintf("127.0.0.1:%d", 20000+len(f.ran)*10+i)
		}
		return f.run(ctx, j)
	}
	_, err := Run(context.Background(), testSpec(), o)
	require.NoError(t, err)
	require.Equal(t, config.Default().Replicas, o.Base.Replicas)
	conflict, err := Lookup("conflict")
	require.NoError(t, err)
	conflict.Protocols = testSpec().Protocols
	_, err = Run(context.Background(), conflict, o)
	require.NoError(t, err)
	_, err = Run(context.Background(), conflict, o)
	require.NoError(t, err, "resuming the experiment that ran second")
}

func TestRunRefusesABadPointBeforeRunning(t *testing.T) {
	f := &fakeRuns{}
	o := testOptions(t, f)
	o.Overlay = func(c *config.Config) { c.Bench.Pendings = 0 }
	_, err := Run(context.Background(), testSpec(), o)
	require.ErrorContains(t, err, "bench.pendings")
	require.Empty(t, f.ran)
}

func TestRunReportsViolations(t *testing.T) {
	f := &fakeRuns{violate: "raft-ht"}
	o := testOptions(t, f)
	res, err := Run(context.Background(), testSpec(), o)
	require.NoError(t, err)
	require.Equal(t, 4, res.Violations)
	md := readFile(t, filepath.Join(res.Dir, "t-property.md"))
	require.Contains(t, md, "**raft-ht weak-ratio=0 run 1: consistency violation**: stale read")
}

func TestPeakPerRepeat(t *testing.T) {
	s, err := Lookup("cross")
	require.NoError(t, err)
	s.Protocols = func() []string { return []string{"curp"} }
	s.QuickValues = []float64{8, 32, 64}
	f := &fakeRuns{}
	o := testOptions(t, f)
	o.Run = func(ctx context.Context, j Job) (Result, error) {
		res, _ := f.run(ctx, j)
		// Throughput grows with the sessions; at 64 the median passes
		// 100 ms, so the peak is at 32.
		res.Report.Throughput = float64(j.Config.Clients.Threads*100 + j.Run)
		if j.Config.Clients.Threads == 64 {
			res.Report.All.P50Ms = 150
		}
		return res, nil
	}
	res, err := Run(context.Background(), s, o)
	require.NoError(t, err)
	md := readFile(t, filepath.Join(res.Dir, "cross.md"))
	require.Contains(t, md, "| curp | 3,202 (3,201–3,202) | 32, 32 |")
	require.Contains(t, md, "| curp | peak | 31,558 (5 machines) | 3,202 (3,201–3,202) | 0.101 |")
	require.Equal(t, 5, len(f.ran[0].Config.Replicas), "the cross experiment runs five replicas")
}

func TestFailureExperimentDrawsTimeline(t *testing.T) {
	s, err := Lookup("failure")
	require.NoError(t, err)
	s.Protocols = func() []string { return []string{"raft"} }
	f := &fakeRuns{}
	o := testOptions(t, f)
	o.Run = func(ctx context.Context, j Job) (Result, error) {
		require.NotNil(t, j.Crash)
		require.Equal(t, "leader", j.Crash.Target)
		res, _ := f.run(ctx, j)
		res.Report.Timeline = &stats.Timeline{BucketMs: 500, Ops: map[string][]int64{"strong-get": {10, 10, 0, 5}, "weak-get": {5, 5, 0, 5}}}
		res.Report.Faults = []stats.Fault{{Kind: "kill", UnavailableMs: map[string]float64{"site0": 1200}}}
		res.Report.FaultSites = []string{"site0", "site1"}
		return res, nil
	}
	res, err := Run(context.Background(), s, o)
	require.NoError(t, err)
	require.Equal(t, 2, res.Runs, "one point, two runs")
	require.Equal(t, []float64{30, 10}, throughputOverTime(&stats.Report{Timeline: &stats.Timeline{BucketMs: 500,
		Ops: map[string][]int64{"strong-get": {10, 10, 0, 5}, "weak-get": {5, 5, 0, 5}}}}), "buckets gathered into seconds")
	md := readFile(t, filepath.Join(res.Dir, "failure.md"))
	require.Contains(t, md, "| raft | 4,502 (4,501–4,502) | 1,200/never; 1,200/never | 0 |")
}

func TestLookupNamesEveryExperiment(t *testing.T) {
	_, err := Lookup("nope")
	require.ErrorContains(t, err, "t-property, conflict, failure, ycsb, cross, tao")
	for _, s := range Specs {
		require.NotEmpty(t, s.Protocols(), s.Name)
		if s.Param != "" {
			require.NotEmpty(t, s.Values, s.Name)
			require.NotEmpty(t, s.QuickValues, s.Name)
		}
		for _, v := range append(slices.Clone(s.Values), s.QuickValues...) {
			if s.Categories != nil {
				require.True(t, v >= 0 && int(v) < len(s.Categories), "%s: value %v names no category", s.Name, v)
			}
		}
		require.NotEmpty(t, s.Metrics, s.Name)
	}
	require.NotContains(t, hybrids(), "curp", "plain CURP has no weak path")
	require.NotContains(t, hybrids(), "raft")
	require.Contains(t, hybrids(), "curp-ho")
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.ReplaceAll(string(b), "\r", "")
}

func TestYCSBExperimentNamesItsWorkloads(t *testing.T) {
	s, err := Lookup("ycsb")
	require.NoError(t, err)
	s.Protocols = func() []string { return []string{"curp"} }
	f := &fakeRuns{}
	o := testOptions(t, f)
	o.Runs = 1
	res, err := Run(context.Background(), s, o)
	require.NoError(t, err)
	var drawn []string
	for _, j := range f.ran {
		drawn = append(drawn, j.Config.Bench.YCSB)
		require.Equal(t, 50, j.Config.Bench.WeakRatio)
	}
	require.Equal(t, []string{"a", "d", "e", "f"}, drawn,
		"quick: a workload with updates, one with inserts, one with scans, one with read-modify-writes")
	rows := readCSV(t, filepath.Join(res.Dir, "ycsb.csv"))
	require.Equal(t, "d", rows[2][3])
	require.Equal(t, "e", rows[3][3])
	md := readFile(t, filepath.Join(res.Dir, "ycsb.md"))
	require.Contains(t, md, "| curp | f |")
	_, err = os.Stat(filepath.Join(res.Dir, "results", "curp-ycsb-f-run1.json"))
	require.NoError(t, err)
}

// TestTAOExperiment: the tao experiment runs the TAO mix over a preloaded
// store on every protocol with a weak path and the two strong-only
// baselines, one point each, and reports each class's latencies by
// protocol.
func TestTAOExperiment(t *testing.T) {
	s, err := Lookup("tao")
	require.NoError(t, err)
	names := s.Protocols()
	require.Subset(t, names, append(hybrids(), "raft", "curp"))
	require.Len(t, names, len(hybrids())+2)
	s.Protocols = func() []string { return []string{"curp", "curp-ho"} }
	f := &fakeRuns{}
	o := testOptions(t, f)
	o.Runs = 1
	o.Run = func(ctx context.Context, j Job) (Result, error) {
		res, _ := f.run(ctx, j)
		res.Report.Classes = map[string]stats.ClassSummary{
			"weak-scan":    {Count: 40, P50Ms: 3, P99Ms: 30},
			"weak-read":    {Count: 50, P50Ms: 0.5, P99Ms: 2},
			"strong-read":  {Count: 4, P50Ms: 50, P99Ms: 80},
			"strong-write": {Count: 1, P50Ms: 60, P99Ms: 90},
		}
		return res, nil
	}
	res, err := Run(context.Background(), s, o)
	require.NoError(t, err)
	require.Equal(t, 2, res.Runs, "one point per protocol")
	for _, j := range f.ran {
		b := j.Config.Bench
		require.Equal(t, "tao", b.Mix)
		require.True(t, b.Preload)
		require.Equal(t, uint64(100_000), b.KeySpace, "quick preloads a tenth of TAO's million keys")
		require.Equal(t, 0.8, b.ZipfSkew)
	}
	rows := readCSV(t, filepath.Join(res.Dir, "tao.csv"))
	col := slices.Index(rows[0], "weak_scan_p99_ms")
	require.Positive(t, col, "the CSV carries the experiment's per-class metrics: %v", rows[0])
	require.Equal(t, "30.000", rows[1][col])
	md := readFile(t, filepath.Join(res.Dir, "tao.md"))
	require.Contains(t, md, "| protocol | throughput (ops/s) | weak-scan p50 (ms) | weak-scan p99 (ms) |")
	require.Contains(t, md, "| curp-ho | 7,501 | 3 | 30 | 0.5 | 2 | 50 | 80 | 60 | 90 | 0 |")
	_, err = os.Stat(filepath.Join(res.Dir, "tao.png"))
	require.NoError(t, err)
}

// TestProgressTakesEachPointsOwnTime: once a point ran, its later repeats
// are estimated at its own time, the others at the mean of the runs.
func TestProgressTakesEachPointsOwnTime(t *testing.T) {
	fast, slow := Point{Protocol: "curp", Value: 0, Run: 1}, Point{Protocol: "curp", Value: 99, Run: 1}
	fast2, slow2 := fast, slow
	fast2.Run, slow2.Run = 2, 2
	p := progress{total: 4}
	p.start([]Point{fast, slow, fast2, slow2})
	p.finished(Spec{}, fast, Result{Seconds: 10})
	require.Equal(t, 30*time.Second, p.eta(), "slow: the mean so far, 10 s; both repeats of fast: 10 s")
	p.finished(Spec{}, slow, Result{Seconds: 100})
	require.Equal(t, 110*time.Second, p.eta(), "each repeat at its point's time")

	resumed := progress{total: 4, done: 2}
	resumed.took(fast, 10)
	resumed.took(slow, 100)
	resumed.start([]Point{fast2, slow2})
	require.Equal(t, 110*time.Second, resumed.eta(), "runs kept from before a resume count too")
}
