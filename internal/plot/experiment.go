package plot

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Curve is one protocol's line in an experiment's panel: at each X, the
// mean of the repeated runs, with the lowest and highest of them drawn as
// an error bar (equal to the mean when there was one run).
type Curve struct {
	Name            string
	X, Mean, Lo, Hi []float64
}

// Panel is one metric of an experiment against its parameter.
type Panel struct {
	Title, XLabel, YLabel string
	// LogY draws the metric on a log scale: latencies that span decades
	// (a fast path and a recovery) stay readable together.
	LogY bool
	// XTicks, when set, name the x values 0, 1, ...: a parameter whose
	// values are categories (workloads, say).
	XTicks []string
	// Dense draws lines alone, without markers: a series of many points
	// (throughput second by second) reads better so.
	Dense  bool
	Curves []Curve
}

// Panels draws an experiment's figure: its panels side by side (at most
// three to a row), one legend for all of them, each curve in the same
// colour and marker in every panel.
func Panels(title string, panels []Panel, path string) error {
	if len(panels) == 0 {
		return fmt.Errorf("plot: %s: no panels", title)
	}
	index := map[string]int{}
	var legend []legendEntry
	var plots []*plot.Plot
	xlo, xhi := xRange(panels)
	for _, pn := range panels {
		p, err := experimentPanel(pn, index, &legend)
		if err != nil {
			return fmt.Errorf("plot: %s, %s: %w", title, pn.Title, err)
		}
		// Every panel has the same parameter across: the same span, so
		// that a value sits at the same place in each.
		switch {
		case pn.XTicks != nil:
			p.X.Min, p.X.Max = -0.5, float64(len(pn.XTicks))-0.5
			p.X.Tick.Marker = categoryTicks(pn.XTicks)
			slantCrowded(p, pn.XTicks)
		case xlo < xhi:
			p.X.Min, p.X.Max = xlo, xhi
		}
		plots = append(plots, p)
	}
	if len(legend) == 0 {
		return fmt.Errorf("plot: %s: no curve has a point", title)
	}
	perRow := 3
	if len(panels) == 4 {
		perRow = 2
	}
	var layout [][]*plot.Plot
	for len(plots) > 0 {
		n := min(perRow, len(plots))
		row := slices.Clone(plots[:n])
		for len(row) < min(perRow, len(panels)) {
			row = append(row, emptyPanel("", ""))
		}
		layout = append(layout, row)
		plots = plots[n:]
	}
	cols := len(layout[0])
	w := vg.Length(cols)*3.8*vg.Inch + 0.6*vg.Inch
	if len(panels) == 1 {
		w = 9 * vg.Inch // one panel, usually over time: room for its seconds
	}
	h := vg.Length(len(layout))*3.4*vg.Inch + 1.1*vg.Inch
	return save(path, w, h, func(dc draw.Canvas) { drawGrid(dc, title, legend, layout) })
}

// xRange is the span of every curve's x values in every panel.
func xRange(panels []Panel) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, pn := range panels {
		for _, c := range pn.Curves {
			for _, x := range c.X {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
	}
	return lo, hi
}

// experimentPanel draws one panel, giving each curve the colour its name
// got in the first panel it appeared in and adding it to the legend then.
func experimentPanel(pn Panel, index map[string]int, legend *[]legendEntry) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = pn.Title
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	lo, hi := math.Inf(1), math.Inf(-1)
	var items []plot.Plotter
	for _, c := range pn.Curves {
		if len(c.Mean) != len(c.X) || len(c.Lo) != len(c.X) || len(c.Hi) != len(c.X) {
			return nil, fmt.Errorf("curve %s: %d x values, %d means, %d lows, %d highs", c.Name, len(c.X), len(c.Mean), len(c.Lo), len(c.Hi))
		}
		var xys plotter.XYs
		var errs plotter.YErrors
		for i, x := range c.X {
			m, l, h := c.Mean[i], c.Lo[i], c.Hi[i]
			if !finite(x, m, l, h) || pn.LogY && l <= 0 {
				continue // a metric the run did not have (no strong operations, say)
			}
			xys = append(xys, plotter.XY{X: x, Y: m})
			errs = append(errs, struct{ Low, High float64 }{m - l, h - m})
			lo, hi = min(lo, l), max(hi, h)
		}
		if len(xys) == 0 {
			continue
		}
		i, seen := index[c.Name]
		if !seen {
			i = len(index)
			index[c.Name] = i
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", c.Name, err)
		}
		line.Color, line.Width = seriesColor(i), vg.Points(1.5)
		points.Color, points.Shape, points.Radius = seriesColor(i), plotutil.Shape(i), vg.Points(3)
		if pn.Dense {
			points.Radius = 0
		}
		bars, err := plotter.NewYErrorBars(errorBars{xys, errs})
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", c.Name, err)
		}
		bars.Color = seriesColor(i)
		items = append(items, line, points, bars)
		if !seen {
			*legend = append(*legend, legendEntry{c.Name, []plot.Thumbnailer{line, points}})
		}
	}
	if len(items) == 0 {
		return emptyPanel(pn.Title, "no run has this metric"), nil
	}
	p.Add(grid(true, true))
	p.Add(items...)
	if pn.LogY {
		logAxis(&p.Y, lo, hi)
	} else {
		p.Y.Min = min(0, lo)
		p.Y.Max = max(hi*1.05, p.Y.Min+1)
		p.Y.Tick.Marker = linearTicks{}
	}
	p.X.Tick.Marker = linearTicks{}
	return p, nil
}

// errorBars pairs each point with its distance to the lowest and highest
// run, the shape plotter.NewYErrorBars reads.
type errorBars struct {
	plotter.XYs
	plotter.YErrors
}

// crowdedChars is how many characters of category names a panel's width
// holds side by side at the tick labels' size.
const crowdedChars = 36

// slantCrowded slants the category names of a panel whose names would
// run into each other side by side (protocols' names, say), so each stays
// readable.
func slantCrowded(p *plot.Plot, names []string) {
	chars := 0
	for _, n := range names {
		chars += len(n) + 1
	}
	if chars <= crowdedChars {
		return
	}
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
}

// categoryTicks labels the x values 0, 1, ... with their names.
type categoryTicks []string

func (c categoryTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for i, name := range c {
		if x := float64(i); x >= lo && x <= hi {
			ticks = append(ticks, plot.Tick{Value: x, Label: name})
		}
	}
	return ticks
}
