package plot

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/hybridkv/hybridkv/internal/stats"
)

// preview, when set, makes TestPreview write the synthetic figures there
// for a person to look at.
var preview = flag.String("preview", "", "directory to write preview figures to")

// quantiles mirror where stats samples its CDFs.
var quantiles = []float64{0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97, 98, 99, 99.5, 99.9, 99.99, 100}

// summary makes a log-normal-looking class with the given median and P99.
func summary(count int64, p50, p99 float64) stats.ClassSummary {
	sigma := math.Log(p99/p50) / 2.326
	at := func(q float64) float64 {
		q = min(max(q, 0.0002), 0.99995)
		return p50 * math.Exp(sigma*math.Sqrt2*math.Erfinv(2*q-1))
	}
	s := stats.ClassSummary{Count: count, P50Ms: p50, P99Ms: p99, AvgMs: p50 * 1.1,
		P999Ms: at(0.999), MaxMs: at(1)}
	for _, q := range quantiles {
		s.CDF = append(s.CDF, stats.CDFPoint{Q: q / 100, Ms: at(q / 100)})
	}
	return s
}

// report builds a run of protocol with classes given as name -> {p50, p99}.
func report(protocol string, sessions int, throughput float64, classes map[string][2]float64) *stats.Report {
	r := &stats.Report{
		Protocol: protocol, Replicas: 3, Clients: 4, SessionsPerClient: sessions,
		Throughput: throughput, Classes: map[string]stats.ClassSummary{},
	}
	var strongP50, strongP99, allP50 float64
	for name, v := range classes {
		s := summary(1000, v[0], v[1])
		r.Classes[name] = s
		r.Ops += s.Count
		if strings.HasPrefix(name, "strong") {
			strongP50, strongP99 = max(strongP50, v[0]), max(strongP99, v[1])
		}
		allP50 = max(allP50, v[0])
	}
	if strongP50 > 0 {
		r.Strong = summary(2000, strongP50, strongP99)
	}
	r.All = summary(r.Ops, allP50/2, max(strongP99, allP50*2))
	return r
}

// comparison is three protocols on one workload: a hybrid one with cheap
// weak operations, another, and one with no weak reads at all.
func comparison() []*stats.Report {
	return []*stats.Report{
		report("curpht", 8, 6200, map[string][2]float64{
			"strong-write": {48, 112}, "strong-read": {46, 104},
			"weak-write": {0.31, 1.9}, "weak-read": {0.18, 0.9}}),
		report("curpho", 8, 5100, map[string][2]float64{
			"strong-write": {52, 131}, "strong-read": {0.22, 1.4},
			"weak-write": {0.35, 2.4}, "weak-read": {0.2, 1.1}}),
		report("raft", 8, 1900, map[string][2]float64{
			"strong-write": {94, 190}, "strong-read": {91, 176},
			"weak-write": {93, 185}}),
	}
}

// sweep is the comparison's protocols over sessions per client. Each is a
// closed loop: N sessions with unloaded mean latency L0 against a capacity
// C complete N·C/(C·L0+N) ops/s, and every operation waits N/C longer.
func sweep() []SweepSeries {
	type proto struct {
		name                 string
		strong, weak, weakOf float64
		capacity             float64
	}
	var out []SweepSeries
	for _, p := range []proto{
		{"curpht", 48, 0.2, 0.6, 4000},
		{"curpho", 52, 0.25, 0.6, 3000},
		{"raft", 94, 93, 0.6, 1500},
	} {
		s := SweepSeries{Protocol: p.name, Param: "sessions per client"}
		for _, sessions := range []int{2, 4, 8, 16, 32} {
			n := float64(4 * sessions)
			l0 := (p.weakOf*p.weak + (1-p.weakOf)*p.strong) / 1000
			tput := n * p.capacity / (p.capacity*l0 + n)
			wait := n / p.capacity * 1000
			strong, weak := p.strong+wait, p.weak+wait
			r := report(p.name, sessions, tput, map[string][2]float64{
				"strong-write": {strong, strong * 2.3},
				"weak-read":    {weak, weak * 4},
			})
			r.All = summary(r.Ops, weak, strong*2.3)
			s.Values = append(s.Values, strconv.Itoa(sessions))
			s.Reports = append(s.Reports, r)
		}
		out = append(out, s)
	}
	return out
}

// figures renders each figure of the synthetic data to path.
var figures = []struct {
	name string
	draw func(path string) error
	w, h vg.Length
}{
	{"classes", func(path string) error { return Classes(comparison(), path) }, classesW, classesH},
	{"cdfs", func(path string) error { return CDFs(comparison(), path) }, cdfsW, cdfsH},
	{"sweep", func(path string) error { return Sweep(sweep(), path) }, sweepW, sweepH},
	{"sweep-values", func(path string) error { return SweepValues(sweep(), path) }, sweepValuesW, sweepValuesH},
	{"over-time", func(path string) error { return OverTime(overTime(), path) }, overTimeW, overTimeH},
	{"over-time-machine", func(path string) error { return OverTime(overTimeWithMachine(), path) }, overTimeW, overTimeMachineH},
	{"faults", func(path string) error { return Faults(faulted("curpht"), path) }, faultsW, faultsH},
	{"recovery", func(path string) error {
		return Recovery([]*stats.Report{faulted("curp"), faulted("curpht"), faulted("raft")}, path)
	}, faultsW, recoveryH(3)},
	{"classes-scans", func(path string) error { return Classes(tao(), path) }, classesW, classesH},
	{"cdfs-scans", func(path string) error { return CDFs(tao(), path) }, cdfsW, cdfsH * 3 / 2},
}

// tao is two protocols on a mix with weak scans and no weak writes: a
// hybrid one, whose weak scans and reads are local, and one that serves
// them as strong ones.
func tao() []*stats.Report {
	return []*stats.Report{
		report("curpht", 8, 3900, map[string][2]float64{
			"strong-write": {62, 140}, "strong-read": {55, 120}, "weak-read": {0.4, 3}, "weak-scan": {4, 40}}),
		report("raft", 8, 900, map[string][2]float64{
			"strong-write": {110, 230}, "strong-read": {105, 220}, "weak-read": {104, 215}, "weak-scan": {120, 260}}),
	}
}

// TestScanClassesOnlyWithScans: figures show the scan classes of runs
// that had scans, and only those.
func TestScanClassesOnlyWithScans(t *testing.T) {
	require.Equal(t, []string{"strong-write", "strong-read", "weak-write", "weak-read"}, classesOf(comparison()))
	require.Equal(t, []string{"strong-write", "strong-read", "weak-write", "weak-read", "weak-scan"}, classesOf(tao()))
	require.Equal(t, []string{"strong-write", "strong-read", "weak-write", "weak-read"}, classesOf([]*stats.Report{nil}))
}

// faulted is a 30 s run whose throughput drops to zero for 2 s after a
// leader is killed at 10 s and restarted at 13 s.
func faulted(protocol string) *stats.Report {
	tl := &stats.Timeline{BucketMs: 100, Ops: map[string][]int64{}}
	for b := range 300 {
		n := int64(300)
		if b >= 100 && b < 120 {
			n = 0
		}
		tl.Ops["strong-write"] = append(tl.Ops["strong-write"], n)
		tl.Ops["weak-write"] = append(tl.Ops["weak-write"], 2*n)
	}
	return &stats.Report{Protocol: protocol, Timeline: tl, Faults: []stats.Fault{
		{Kind: "kill", What: "SIGKILL leader replica 1", AtS: 10, HealedS: 13},
	}}
}

func TestFaultFiguresNeedATimeline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.png")
	require.Error(t, Faults(&stats.Report{Protocol: "x"}, path))
	require.Error(t, Recovery([]*stats.Report{faulted("curp"), {Protocol: "x"}}, path))
	require.Error(t, Recovery(nil, path))
	_, err := os.Stat(path)
	require.True(t, os.IsNotExist(err))
}

// overTimeWithMachine is overTime with the machine probe's samples: the
// machine's memory slows as the throughput sags.
func overTimeWithMachine() *stats.Report {
	r := overTime()
	for s := range 60 {
		r.OverTime.Series.MachineLoadNs = append(r.OverTime.Series.MachineLoadNs, stats.Point{Seconds: float64(s) + 0.9, Value: 200 + float64(s)})
	}
	return r
}

func TestBinnedMeans(t *testing.T) {
	xy := binned([]stats.Point{{Seconds: 1, Value: 10}, {Seconds: 9.9, Value: 20}, {Seconds: 10, Value: 40}, {Seconds: 35, Value: 1}}, 10)
	require.Equal(t, plotter.XYs{{X: 5, Y: 15}, {X: 15, Y: 40}, {X: 35, Y: 1}}, xy, "a span without samples draws no point")
}

// overTime is a 60 s curpht run whose throughput sags while replica 3's
// lag and every replica's memory grow.
func overTime() *stats.Report {
	tl := &stats.Series{Lag: map[uint64][]stats.Point{}, RSSMB: map[uint64][]stats.Point{}}
	for s := range 60 {
		sec := float64(s)
		tl.Throughput = append(tl.Throughput, 40000-300*sec)
		tl.Lag[2] = append(tl.Lag[2], stats.Point{Seconds: sec, Value: 10})
		tl.Lag[3] = append(tl.Lag[3], stats.Point{Seconds: sec, Value: 5 * sec})
		for id := uint64(1); id <= 3; id++ {
			tl.RSSMB[id] = append(tl.RSSMB[id], stats.Point{Seconds: sec, Value: 30 + float64(id)*sec})
		}
	}
	return &stats.Report{Protocol: "curpht", OverTime: &stats.OverTime{Series: tl}}
}

func TestOverTimeNeedsATimeline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.png")
	require.Error(t, OverTime(&stats.Report{Protocol: "x"}, path))
	require.Error(t, OverTime(&stats.Report{Protocol: "x", OverTime: &stats.OverTime{}}, path))
	_, err := os.Stat(path)
	require.True(t, os.IsNotExist(err))
	bad := overTime()
	bad.OverTime.Series.Lag[2][0].Value = math.NaN()
	require.Error(t, OverTime(bad, path))
}

func pixels(l vg.Length) int { return int(float64(l/vg.Inch)*pngDPI + 0.5) }

func TestFiguresPNG(t *testing.T) {
	dir := t.TempDir()
	for _, f := range figures {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(dir, f.name+".png")
			require.NoError(t, f.draw(path))
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Greater(t, len(data), 20_000, "a figure with text and lines is not that small")
			img, err := png.Decode(bytes.NewReader(data))
			require.NoError(t, err)
			require.Equal(t, pixels(f.w), img.Bounds().Dx())
			require.Equal(t, pixels(f.h), img.Bounds().Dy())
		})
	}
}

func TestFiguresSVG(t *testing.T) {
	dir := t.TempDir()
	for _, f := range figures {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(dir, f.name+".SVG")
			require.NoError(t, f.draw(path))
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Greater(t, len(data), 10_000)
			require.Contains(t, string(data), "<svg")
			dec := xml.NewDecoder(bytes.NewReader(data))
			for {
				_, err := dec.Token()
				if err == io.EOF {
					break
				}
				require.NoError(t, err, "the SVG is well-formed XML")
			}
			require.Contains(t, string(data), "curpht", "the legend names the protocols")
		})
	}
}

func TestEmptyInputIsAnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.png")
	noOps := []*stats.Report{{Protocol: "idle"}}
	for name, err := range map[string]error{
		"classes nil":      Classes(nil, path),
		"classes nil item": Classes([]*stats.Report{nil}, path),
		"classes no ops":   Classes(noOps, path),
		"cdfs nil":         CDFs(nil, path),
		"cdfs no ops":      CDFs(noOps, path),
		"sweep nil":        Sweep(nil, path),
		"sweep no reports": Sweep([]SweepSeries{{Protocol: "x"}}, path),
		"sweep no ops":     Sweep([]SweepSeries{{Protocol: "x", Reports: noOps}}, path),
		"sweep values":     Sweep([]SweepSeries{{Protocol: "x", Values: []string{"1", "2"}, Reports: noOps}}, path),
	} {
		require.Error(t, err, name)
	}
	require.NoFileExists(t, path, "a failed figure writes nothing")
}

func TestUnsupportedFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jpg")
	require.ErrorContains(t, Classes(comparison(), path), "unsupported figure format")
	require.NoFileExists(t, path)
}

func TestBadNumbersAreAnError(t *testing.T) {
	reports := comparison()
	s := reports[0].Classes["weak-read"]
	s.P50Ms = math.NaN()
	s.CDF[3].Ms = math.Inf(1)
	reports[0].Classes["weak-read"] = s
	dir := t.TempDir()
	require.Error(t, Classes(reports, filepath.Join(dir, "c.png")))
	require.Error(t, CDFs(reports, filepath.Join(dir, "d.png")))
}

// A class with no operations in any report leaves an empty panel or bar
// group, not a failed figure; a zero latency is drawn at the axis floor.
func TestMissingClassesAndZeroLatencies(t *testing.T) {
	r := report("only-weak", 4, 1000, map[string][2]float64{"weak-read": {0.2, 1}})
	s := r.Classes["weak-read"]
	s.CDF[0].Ms = 0
	r.Classes["weak-read"] = s
	dir := t.TempDir()
	require.NoError(t, Classes([]*stats.Report{r}, filepath.Join(dir, "c.png")))
	require.NoError(t, CDFs([]*stats.Report{r}, filepath.Join(dir, "d.svg")))
	require.NoError(t, Sweep([]SweepSeries{{Protocol: "only-weak", Reports: []*stats.Report{r}}}, filepath.Join(dir, "s.png")))
}

func TestLogTicksLabelEveryDecade(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	require.Equal(t, []string{"0.01", "0.1", "1", "10", "100", "1000"}, labels(0.01, 1000))
	require.Equal(t, []string{"10", "20", "50", "100", "200", "500", "1000"}, labels(10, 1000))
	require.Empty(t, labels(0, 10), "no ticks for a range a log axis cannot show")
}

func TestLinearTicksAreRound(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (linearTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	require.Equal(t, []string{"0", "500", "1000", "1500", "2000", "2500"}, labels(0, 2750))
	require.Equal(t, []string{"0", "2000", "4000", "6000", "8000", "10000"}, labels(0, 11000))
	require.Equal(t, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}, labels(0, 1.1))
	require.Empty(t, labels(1, 1))
}

func TestClusterShape(t *testing.T) {
	a := &stats.Report{Replicas: 3, Clients: 4, SessionsPerClient: 8}
	b := &stats.Report{Replicas: 3, Clients: 4, SessionsPerClient: 16}
	require.Equal(t, "3 replicas, 4 clients × 8 sessions", clusterShape([]*stats.Report{a, a}))
	require.Equal(t, "3 replicas, 4 clients", clusterShape([]*stats.Report{a, b}))
	require.Equal(t, "", clusterShape([]*stats.Report{{}}))
}

// TestPreview writes the synthetic figures to the -preview directory, for
// checking by eye that they are legible.
func TestPreview(t *testing.T) {
	if *preview == "" {
		t.Skip("no -preview directory")
	}
	require.NoError(t, os.MkdirAll(*preview, 0o755))
	for _, f := range figures {
		for _, ext := range []string{".png", ".svg"} {
			require.NoError(t, f.draw(filepath.Join(*preview, f.name+ext)))
		}
	}
	// Sparse input: one protocol with weak reads only, and many protocols
	// whose legend has to wrap.
	weak := []*stats.Report{report("only-weak", 4, 1000, map[string][2]float64{"weak-read": {0.2, 1}})}
	require.NoError(t, Classes(weak, filepath.Join(*preview, "classes-sparse.png")))
	require.NoError(t, CDFs(weak, filepath.Join(*preview, "cdfs-sparse.png")))
	var many []*stats.Report
	for i := range 9 {
		r := comparison()[i%3]
		r.Protocol = fmt.Sprintf("%s-variant-%d", r.Protocol, i)
		many = append(many, r)
	}
	require.NoError(t, CDFs(many, filepath.Join(*preview, "cdfs-many.png")))
	require.NoError(t, Classes(many, filepath.Join(*preview, "classes-many.png")))
}
