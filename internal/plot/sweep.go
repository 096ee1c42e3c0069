package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hybridkv/hybridkv/internal/stats"
)

// sweepW and sweepH are the size of the Sweep figure.
const (
	sweepW = 11 * vg.Inch
	sweepH = 5.5 * vg.Inch
)

// SweepSeries is one protocol's runs in a parameter sweep: Reports[i] is
// the run with Param set to Values[i].
type SweepSeries struct {
	// Protocol names the series in the legend.
	Protocol string
	// Param is the swept parameter, such as "sessions per client".
	Param string
	// Values label the points; they may be left empty, but otherwise
	// there must be one per report.
	Values  []string
	Reports []*stats.Report
}

// Sweep draws throughput-latency curves, one per series, in two panels:
// the median latency of all operations, and the P99 of strong operations,
// against throughput. Each point is a run, labelled with its value of the
// swept parameter, and points are joined in sweep order, so a protocol
// past saturation shows as a curve bending back (throughput falling while
// latency climbs). Runs with no operations, or no strong ones for the
// second panel, have no point.
func Sweep(series []SweepSeries, path string) error {
	if len(series) == 0 {
		return errNoReports
	}
	var all []*stats.Report
	var params []string
	for i, s := range series {
		if len(s.Reports) == 0 {
			return fmt.Errorf("plot: sweep series %d (%s) has no reports", i, s.Protocol)
		}
		if len(s.Values) != 0 && len(s.Values) != len(s.Reports) {
			return fmt.Errorf("plot: sweep series %d (%s) has %d values for %d reports",
				i, s.Protocol, len(s.Values), len(s.Reports))
		}
		if err := checkReports(s.Reports); err != nil {
			return fmt.Errorf("sweep series %d (%s): %w", i, s.Protocol, err)
		}
		all = append(all, s.Reports...)
		if s.Param != "" && !slices.Contains(params, s.Param) {
			params = append(params, s.Param)
		}
	}

	// A series' curve has the same style in both panels; the legend takes
	// it from the first panel the series appears in.
	thumbs := make([][]plot.Thumbnailer, len(series))
	median, err := sweepPanel(series, "median latency, all operations", thumbs,
		func(r *stats.Report) (float64, bool) { return r.All.P50Ms, r.All.Count > 0 })
	if err != nil {
		return err
	}
	tail, err := sweepPanel(series, "P99 latency, strong operations", thumbs,
		func(r *stats.Report) (float64, bool) { return r.Strong.P99Ms, r.Strong.Count > 0 })
	if err != nil {
		return err
	}
	var legend []legendEntry
	for i, t := range thumbs {
		if t != nil {
			legend = append(legend, legendEntry{seriesLabel(series[i], i), t})
		}
	}
	if len(legend) == 0 {
		return fmt.Errorf("plot: no run in the sweep completed an operation")
	}

	title := "Throughput vs latency"
	if len(params) > 0 {
		title += ", sweeping " + strings.Join(params, ", ")
	}
	title = withShape(title, all)
	layout := [][]*plot.Plot{{median, tail}}
	return save(path, sweepW, sweepH, func(dc draw.Canvas) { drawGrid(dc, title, legend, layout) })
}

func seriesLabel(s SweepSeries, i int) string {
	if s.Protocol == "" {
		return fmt.Sprintf("series %d", i+1)
	}
	return s.Protocol
}

// sweepPanel draws one latency of every series against throughput,
// recording in thumbs[i] the legend icon of series i if this is the first
// panel it appears in.
func sweepPanel(series []SweepSeries, title string, thumbs [][]plot.Thumbnailer,
	latency func(*stats.Report) (float64, bool)) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "throughput (ops/s)"
	p.Y.Label.Text = "latency (ms)"

	lo, hi, xmax := math.Inf(1), math.Inf(-1), 0.0
	var curves []plot.Plotter
	labels := &pointLabels{}
	for i, s := range series {
		var xys plotter.XYs
		var names []string
		for j, r := range s.Reports {
			ms, ok := latency(r)
			if !ok {
				continue
			}
			if !finite(ms, r.Throughput) {
				return nil, fmt.Errorf("plot: sweep series %d (%s): report %d has a latency or throughput that is not a number", i, s.Protocol, j)
			}
			ms = clampMs(ms)
			xys = append(xys, plotter.XY{X: r.Throughput, Y: ms})
			if len(s.Values) > 0 {
				names = append(names, s.Values[j])
			}
			lo, hi, xmax = min(lo, ms), max(hi, ms), max(xmax, r.Throughput)
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("plot: sweep series %d (%s): %w", i, s.Protocol, err)
		}
		line.Color = seriesColor(i)
		line.Width = vg.Points(1.5)
		points.Color = seriesColor(i)
		points.Shape = plotutil.Shape(i)
		points.Radius = vg.Points(3)
		curves = append(curves, line, points)
		if names != nil {
			labels.series = append(labels.series, labelSeries{xys, names, seriesColor(i)})
		}
		if thumbs[i] == nil {
			thumbs[i] = []plot.Thumbnailer{line, points}
		}
	}
	if len(curves) == 0 {
		return emptyPanel(title, "no operations to show"), nil
	}
	p.Add(grid(true, true))
	p.Add(curves...)
	p.Add(labels)
	logAxis(&p.Y, lo, hi)
	// Throughput from zero, so that curves' positions compare in absolute
	// terms and not just relative to the busiest run.
	p.X.Min, p.X.Max = 0, max(xmax*1.1, 1)
	p.X.Tick.Marker = linearTicks{}
	return p, nil
}

// pointLabels labels the points of every series in a panel with their
// swept values, leaving out any label that would overlap one already drawn:
// at low load the runs of a sweep bunch together, and a pile of overlapping
// numbers is less readable than a few clear ones. Each series' first and
// last points are labelled before its middle ones, since the ends say what
// range the sweep covered.
type pointLabels struct {
	series []labelSeries
}

type labelSeries struct {
	xys    plotter.XYs
	labels []string
	color  color.Color
}

func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(8)
	// Below and to the right of its point: the curves climb to the right,
	// so that is where a label is least likely to sit on its own curve.
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	offset := vg.Point{X: vg.Points(4), Y: -vg.Points(2)}
	var taken []vg.Rectangle
	for _, s := range l.series {
		n := len(s.xys)
		order := []int{0}
		if n > 1 {
			order = append(order, n-1)
		}
		for i := 1; i < n-1; i++ {
			order = append(order, i)
		}
		sty.Color = s.color
		for _, i := range order {
			at := vg.Point{X: trX(s.xys[i].X), Y: trY(s.xys[i].Y)}.Add(offset)
			box := sty.Rectangle(s.labels[i]).Add(at)
			if slices.ContainsFunc(taken, func(r vg.Rectangle) bool { return overlaps(r, box) }) {
				continue
			}
			taken = append(taken, box)
			c.FillText(sty, at, s.labels[i])
		}
	}
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}
