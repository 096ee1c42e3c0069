package experiment

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// table is an experiment's finished runs, by protocol and value, repeats
// in run order.
type table struct {
	spec      Spec
	protocols []string
	values    []float64
	runs      map[string]map[float64][]Result
}

func newTable(s Spec, points []Point, results map[Point]Result) *table {
	t := &table{spec: s, runs: map[string]map[float64][]Result{}}
	for _, p := range points {
		if !slices.Contains(t.protocols, p.Protocol) {
			t.protocols = append(t.protocols, p.Protocol)
		}
		if !slices.Contains(t.values, p.Value) {
			t.values = append(t.values, p.Value)
		}
		byValue := t.runs[p.Protocol]
		if byValue == nil {
			byValue = map[float64][]Result{}
			t.runs[p.Protocol] = byValue
		}
		byValue[p.Value] = append(byValue[p.Value], results[p])
	}
	return t
}

// spread is a metric over the repeats of one point: their mean, lowest
// and highest, and how many runs had it.
type spread struct {
	Mean, Lo, Hi float64
	N            int
}

func spreadOf(xs []float64) spread {
	s := spread{Lo: math.Inf(1), Hi: math.Inf(-1), N: len(xs)}
	if len(xs) == 0 {
		return spread{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	for _, x := range xs {
		s.Mean += x
		s.Lo, s.Hi = min(s.Lo, x), max(s.Hi, x)
	}
	s.Mean /= float64(len(xs))
	return s
}

// metric is m over the repeats of protocol at value v.
func (t *table) metric(m Metric, protocol string, v float64) spread {
	var xs []float64
	for _, r := range t.runs[protocol][v] {
		if x, ok := m.Of(r.Report); ok {
			xs = append(xs, x)
		}
	}
	return spreadOf(xs)
}

// failed sums the failed operations over protocol's runs at v.
func (t *table) failed(protocol string, v float64) int64 {
	var n int64
	for _, r := range t.runs[protocol][v] {
		n += r.Report.Failed
	}
	return n
}

// peak is a protocol's peak throughput under bench's rule (average and
// median latency within 100 ms) over the parameter's values, per repeat:
// the spread of the repeats' peaks, and the value each peaked at (NaN for
// a repeat with no point within the rule).
func (t *table) peak(protocol string) (spread, []float64) {
	byRun := map[int][]*stats.Report{}
	valueOf := map[*stats.Report]float64{}
	var runs []int
	for _, v := range t.values {
		for i, r := range t.runs[protocol][v] {
			if !slices.Contains(runs, i) {
				runs = append(runs, i)
			}
			byRun[i] = append(byRun[i], r.Report)
			valueOf[r.Report] = v
		}
	}
	var peaks, at []float64
	for _, i := range runs {
		if best := bench.Peak(byRun[i], 100); best != nil {
			peaks = append(peaks, best.Throughput)
			at = append(at, valueOf[best])
		} else {
			at = append(at, math.NaN())
		}
	}
	return spreadOf(peaks), at
}

// csvColumns are the metrics of the experiment's CSV: those every
// experiment's carries, then the experiment's own others.
func (t *table) csvColumns() []Metric {
	cols := slices.Clone(csvMetrics)
	for _, m := range t.spec.Metrics {
		if !slices.ContainsFunc(cols, func(c Metric) bool { return c.Column == m.Column }) {
			cols = append(cols, m)
		}
	}
	return cols
}

// writeCSV writes one row per run.
func (t *table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cols := t.csvColumns()
	head := []string{"experiment", "protocol", "param", "value", "run", "ops", "failed"}
	for _, m := range cols {
		head = append(head, m.Column)
	}
	head = append(head, "checked", "violation", "seconds", "build")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, v := range t.values {
		for _, name := range t.protocols {
			for i, r := range t.runs[name][v] {
				row := []string{t.spec.Name, name, t.spec.Param, t.spec.valueName(v), strconv.Itoa(i + 1),
					strconv.FormatInt(r.Report.Ops, 10), strconv.FormatInt(r.Report.Failed, 10)}
				for _, m := range cols {
					cell := ""
					if x, ok := m.Of(r.Report); ok {
						cell = strconv.FormatFloat(x, 'f', 3, 64)
					}
					row = append(row, cell)
				}
				row = append(row, strconv.FormatBool(r.Checked), r.Violation,
					strconv.FormatFloat(r.Seconds, 'f', 1, 64), r.Build)
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// throughputOverTime is a run's completions in each second from the start
// of the run, every class together: the timeline a run with faults keeps
// (its buckets gathered into seconds), or the measured window's seconds.
func throughputOverTime(r *stats.Report) []float64 {
	tl := r.Timeline
	if tl == nil || tl.BucketMs <= 0 {
		return r.PerSecond
	}
	var out []float64
	for _, ops := range tl.Ops {
		for i, n := range ops {
			sec := i * tl.BucketMs / 1000
			for len(out) <= sec {
				out = append(out, 0)
			}
			out[sec] += float64(n)
		}
	}
	return out
}

// format writes a number as the summary's tables do: whole above 100,
// three significant digits below.
func format(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case math.Abs(x) >= 100:
		return withThousands(strconv.FormatFloat(x, 'f', 0, 64))
	default:
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
}

// formatSpread writes a mean with its range when the repeats differ.
func formatSpread(s spread) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 || s.Lo == s.Hi {
		return format(s.Mean)
	}
	return fmt.Sprintf("%s (%s–%s)", format(s.Mean), format(s.Lo), format(s.Hi))
}

func withThousands(digits string) string {
	neg := digits != "" && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	var out []byte
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, digits[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
