package plot

import (
	"cmp"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hybridkv/hybridkv/internal/stats"
)

// SweepValues draws a sweep against the swept parameter itself, in three
// panels: throughput, the strong operations' median and P99, and the weak
// operations'. Sweep shows where each protocol saturates; this shows how
// each class fares as the parameter moves (the weak share, say: does a
// strong operation's latency stay put as weak ones take over). Each
// series needs a numeric value per report; a class a run has no operation
// of leaves a gap.
func SweepValues(series []SweepSeries, path string) error {
	if len(series) == 0 {
		return errNoReports
	}
	xs := make([][]float64, len(series))
	var all []*stats.Report
	param := ""
	for i, s := range series {
		if len(s.Reports) == 0 || len(s.Values) != len(s.Reports) {
			return fmt.Errorf("plot: sweep series %d (%s) needs one value per report, has %d for %d",
				i, s.Protocol, len(s.Values), len(s.Reports))
		}
		if err := checkReports(s.Reports); err != nil {
			return fmt.Errorf("sweep series %d (%s): %w", i, s.Protocol, err)
		}
		for _, v := range s.Values {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !finite(x) {
				return fmt.Errorf("plot: sweep series %d (%s): value %q is not a number", i, s.Protocol, v)
			}
			xs[i] = append(xs[i], x)
		}
		all = append(all, s.Reports...)
		param = cmp.Or(param, s.Param)
	}
	thumbs := make([][]plot.Thumbnailer, len(series))
	tput, err := valuesPanel(series, xs, param, "throughput", "ops/s", thumbs, false,
		func(r *stats.Report) (float64, float64, bool) { return r.Throughput, math.NaN(), true })
	if err != nil {
		return err
	}
	strong, err := valuesPanel(series, xs, param, "strong operations: median (solid), P99 (dashed)", "latency (ms)", thumbs, true,
		func(r *stats.Report) (float64, float64, bool) {
			return r.Strong.P50Ms, r.Strong.P99Ms, r.Strong.Count > 0
		})
	if err != nil {
		return err
	}
	weak, err := valuesPanel(series, xs, param, "weak operations: median (solid), P99 (dashed)", "latency (ms)", thumbs, true,
		func(r *stats.Report) (float64, float64, bool) { return r.Weak.P50Ms, r.Weak.P99Ms, r.Weak.Count > 0 })
	if err != nil {
		return err
	}
	var legend []legendEntry
	for i, t := range thumbs {
		if t != nil {
			legend = append(legend, legendEntry{seriesLabel(series[i], i), t})
		}
	}
	title := withShape("Throughput and latency by "+cmp.Or(param, "swept value"), all)
	layout := [][]*plot.Plot{{tput, strong, weak}}
	return save(path, sweepValuesW, sweepValuesH, func(dc draw.Canvas) { drawGrid(dc, title, legend, layout) })
}

// sweepValuesW and sweepValuesH are the size of the SweepValues figure.
const (
	sweepValuesW = 14 * vg.Inch
	sweepValuesH = 5 * vg.Inch
)

// valuesPanel draws one quantity (and, if the second value is a number,
// a second one dashed) of every series against the swept value. Latency
// panels have a log axis; throughput starts at zero.
func valuesPanel(series []SweepSeries, xs [][]float64, param, title, unit string, thumbs [][]plot.Thumbnailer,
	latency bool, value func(*stats.Report) (float64, float64, bool)) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = param
	p.Y.Label.Text = unit
	lo, hi := math.Inf(1), math.Inf(-1)
	var lines []plot.Plotter
	for i, s := range series {
		var first, second plotter.XYs
		for j, r := range s.Reports {
			a, b, ok := value(r)
			if !ok {
				continue
			}
			if !finite(a) {
				return nil, fmt.Errorf("plot: sweep series %d (%s): report %d has a value that is not a number", i, s.Protocol, j)
			}
			if latency {
				a = clampMs(a)
			}
			first = append(first, plotter.XY{X: xs[i][j], Y: a})
			lo, hi = min(lo, a), max(hi, a)
			if finite(b) {
				b = clampMs(b)
				second = append(second, plotter.XY{X: xs[i][j], Y: b})
				lo, hi = min(lo, b), max(hi, b)
			}
		}
		for k, xys := range []plotter.XYs{first, second} {
			if len(xys) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("plot: sweep series %d (%s): %w", i, s.Protocol, err)
			}
			line.Color, line.Width = seriesColor(i), vg.Points(1.5)
			if k == 1 {
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			points.Color, points.Shape, points.Radius = seriesColor(i), plotutil.Shape(i), vg.Points(3)
			lines = append(lines, line, points)
			if thumbs[i] == nil && k == 0 {
				thumbs[i] = []plot.Thumbnailer{line, points}
			}
		}
	}
	if len(lines) == 0 {
		return emptyPanel(title, "no operations of this class"), nil
	}
	p.Add(grid(true, true))
	p.Add(lines...)
	if latency {
		logAxis(&p.Y, lo, hi)
	} else {
		p.Y.Min, p.Y.Max = 0, max(hi*1.1, 1)
		p.Y.Tick.Marker = linearTicks{}
	}
	p.X.Tick.Marker = linearTicks{}
	return p, nil
}
