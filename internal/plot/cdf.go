package plot

import (
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

// cdfsW and cdfsH are the size of the CDFs figure of two rows of panels;
// each further row adds half of cdfsH.
const (
	cdfsW = 10 * vg.Inch
	cdfsH = 8 * vg.Inch
)

// CDFs draws the latency distribution of each operation class as a grid
// of panels two to a row (2x2 for runs without scans), one line per report
// in each: x is the latency (log scale), y the fraction of the class's
// operations that took at most that long. A report with no operations of
// a class, or saved without CDF samples, has no line in that panel. Each
// panel has its own latency range, since the classes lie orders of
// magnitude apart.
func CDFs(reports []*stats.Report, path string) error {
	if err := checkReports(reports); err != nil {
		return err
	}
	names := classesOf(reports)
	panels := make([]*plot.Plot, len(names))
	// A report's line has the same style in every panel; the legend takes
	// it from the first panel the report appears in.
	lines := make([]*plotter.Line, len(reports))
	for c, name := range names {
		p, err := cdfPanel(reports, name, lines)
		if err != nil {
			return err
		}
		panels[c] = p
	}
	var legend []legendEntry
	for i, l := range lines {
		if l != nil {
			legend = append(legend, legendEntry{seriesName(reports[i], i), []plot.Thumbnailer{l}})
		}
	}
	if len(legend) == 0 {
		return fmt.Errorf("plot: no report has a latency distribution to draw")
	}
	if len(panels)%2 == 1 {
		panels = append(panels, emptyPanel("", "")) // the grid's rows are whole
	}
	var layout [][]*plot.Plot
	for i := 0; i < len(panels); i += 2 {
		layout = append(layout, panels[i:i+2])
	}
	title := withShape("Latency CDF by operation class", reports)
	h := cdfsH * vg.Length(len(layout)) / 2
	return save(path, cdfsW, h, func(dc draw.Canvas) { drawGrid(dc, title, legend, layout) })
}

// cdfPanel draws one class's panel, recording in lines[i] the line of
// report i if it is the first the report has.
func cdfPanel(reports []*stats.Report, class string, lines []*plotter.Line) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = class
	p.X.Label.Text = "latency (ms)"
	p.Y.Label.Text = "fraction of operations ≤ latency"

	lo, hi := math.Inf(1), math.Inf(-1)
	var drawn []plot.Plotter
	unsampled := false
	for i, r := range reports {
		s, ok := r.Classes[class]
		if !ok || s.Count == 0 {
			continue
		}
		if len(s.CDF) == 0 {
			unsampled = true
			continue
		}
		xys := make(plotter.XYs, len(s.CDF))
		for j, pt := range s.CDF {
			if !finite(pt.Q, pt.Ms) {
				return nil, fmt.Errorf("plot: report %d (%s): %s CDF point %d is not a number", i, seriesName(r, i), class, j)
			}
			xys[j] = plotter.XY{X: clampMs(pt.Ms), Y: pt.Q}
			lo, hi = min(lo, xys[j].X), max(hi, xys[j].X)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot: report %d (%s): %s CDF: %w", i, seriesName(r, i), class, err)
		}
		l.Color = seriesColor(i)
		l.Width = vg.Points(1.5)
		// Dashes tell apart protocols whose curves coincide, as weak
		// operations' often do.
		l.Dashes = plotutil.Dashes(i)
		drawn = append(drawn, l)
		if lines[i] == nil {
			lines[i] = l
		}
	}
	switch {
	case len(drawn) == 0 && unsampled:
		return emptyPanel(class, "no CDF samples in the reports"), nil
	case len(drawn) == 0:
		return emptyPanel(class, "no operations of this class"), nil
	}
	p.Add(grid(true, true))
	p.Add(drawn...)
	logAxis(&p.X, lo, hi)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = fractionTicks
	return p, nil
}

// fractionTicks mark every tenth of a CDF's height, so the grid shows the
// deciles a reader looks for.
var fractionTicks = func() plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for i := range 11 {
		v := float64(i) / 10
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 1, 64)})
	}
	return ticks
}()
