package plot

import (
	"errors"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hybridkv/hybridkv/internal/stats"
)

// faultsW and faultsH are the size of the Faults figure: wide, since it is
// read along time.
const (
	faultsW = 12 * vg.Inch
	faultsH = 5 * vg.Inch
)

// faultColors shade each kind of fault; a kind not listed is grey.
var faultColors = map[string]color.NRGBA{
	"kill":        {R: 0xe0, G: 0x40, B: 0x40, A: 0x40},
	"pause":       {R: 0xf0, G: 0xa0, B: 0x20, A: 0x48},
	"partition":   {R: 0x40, G: 0x70, B: 0xe0, A: 0x40},
	"link":        {R: 0x30, G: 0xb0, B: 0x50, A: 0x40},
	"restart-all": {R: 0x90, G: 0x40, B: 0xc0, A: 0x40},
}

func faultColor(kind string) color.NRGBA {
	if c, ok := faultColors[kind]; ok {
		return c
	}
	return color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x40}
}

// Faults draws a run's throughput over time, one line per operation class
// at the report's timeline resolution, with each injected fault shaded from
// injection to heal: the failure-recovery figure. The throughput axis is
// linear and starts at zero, since what the figure shows is the drop to
// zero and the climb back.
func Faults(r *stats.Report, path string) error {
	if r == nil {
		return errors.New("plot: report has no throughput timeline")
	}
	p, legend, err := faultPanel(r)
	if err != nil {
		return err
	}
	title := withShape(fmt.Sprintf("%s: throughput over time, faults shaded from injection to heal", seriesName(r, 0)),
		[]*stats.Report{r})
	return save(path, faultsW, faultsH, func(dc draw.Canvas) { drawGrid(dc, title, legend, [][]*plot.Plot{{p}}) })
}

// Recovery stacks the failure-recovery panels of several runs (one per
// protocol, say, each through the same fault) on one time axis, so the
// drops and climbs back can be compared.
func Recovery(reports []*stats.Report, path string) error {
	if err := checkReports(reports); err != nil {
		return err
	}
	var rows [][]*plot.Plot
	var legend []legendEntry
	seen := make(map[string]bool)
	end := 0.0
	for i, r := range reports {
		p, entries, err := faultPanel(r)
		if err != nil {
			return fmt.Errorf("%s: %w", seriesName(r, i), err)
		}
		p.Title.Text = seriesName(r, i)
		for _, e := range entries {
			if !seen[e.name] {
				seen[e.name] = true
				legend = append(legend, e)
			}
		}
		end = max(end, p.X.Max)
		rows = append(rows, []*plot.Plot{p})
	}
	for _, row := range rows {
		row[0].X.Max = end
	}
	title := withShape("throughput over time, faults shaded from injection to heal", reports)
	return save(path, faultsW, recoveryH(len(rows)), func(dc draw.Canvas) {
		drawGrid(dc, title, legend, rows)
	})
}

// recoveryH is the height of the Recovery figure of n runs.
func recoveryH(n int) vg.Length { return vg.Length(n)*faultsH/2 + vg.Inch }

// faultPanel is one run's throughput per class over time with its faults
// shaded, and the legend entries it uses.
func faultPanel(r *stats.Report) (*plot.Plot, []legendEntry, error) {
	if r.Timeline == nil || r.Timeline.BucketMs <= 0 {
		return nil, nil, errors.New("plot: report has no throughput timeline")
	}
	tl := r.Timeline
	p := newPlot()
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = fmt.Sprintf("throughput (ops/s, per %d ms)", tl.BucketMs)
	p.Add(&faultBands{faults: r.Faults})
	p.Add(grid(true, true))
	bucket := float64(tl.BucketMs) / 1000
	var legend []legendEntry
	end := 0.0
	for i, name := range classNames {
		counts := tl.Ops[name]
		if len(counts) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(counts))
		for b, n := range counts {
			xys[b] = plotter.XY{X: (float64(b) + 0.5) * bucket, Y: float64(n) / bucket}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, nil, fmt.Errorf("plot: %s timeline: %w", name, err)
		}
		l.Color = seriesColor(i)
		l.Width = vg.Points(1)
		p.Add(l)
		legend = append(legend, legendEntry{name, []plot.Thumbnailer{l}})
		end = max(end, float64(len(counts))*bucket)
	}
	if len(legend) == 0 {
		return nil, nil, errors.New("plot: the timeline has no completed operations")
	}
	seen := make(map[string]bool)
	for _, f := range r.Faults {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			legend = append(legend, legendEntry{f.Kind, []plot.Thumbnailer{bandThumb(faultColor(f.Kind))}})
		}
		end = max(end, f.HealedS)
	}
	p.X.Min, p.X.Max = 0, end
	p.Y.Min = 0
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	return p, legend, nil
}

// faultBands shades each fault's interval over the full height of the
// data area, under the curves, with its kind written at the top.
type faultBands struct{ faults []stats.Fault }

func (b *faultBands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := textStyle(7)
	sty.Color = color.Gray{Y: 0x40}
	for _, f := range b.faults {
		x0, x1 := max(trX(f.AtS), c.Min.X), min(trX(f.HealedS), c.Max.X)
		if x1 <= x0 {
			continue
		}
		rect := vg.Rectangle{Min: vg.Point{X: x0, Y: c.Min.Y}, Max: vg.Point{X: x1, Y: c.Max.Y}}
		c.SetColor(faultColor(f.Kind))
		c.Fill(rect.Path())
		c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: c.Max.Y - 2}, f.Kind)
	}
}

// DataRange lets the bands widen the axes to every fault.
func (b *faultBands) DataRange() (xmin, xmax, ymin, ymax float64) {
	if len(b.faults) == 0 {
		return 0, 0, 0, 0
	}
	xmin, xmax = b.faults[0].AtS, b.faults[0].HealedS
	for _, f := range b.faults[1:] {
		xmin, xmax = min(xmin, f.AtS), max(xmax, f.HealedS)
	}
	return xmin, xmax, 0, 0
}

// bandThumb is a fault kind's legend swatch.
type bandThumb color.NRGBA

func (t bandThumb) Thumbnail(c *draw.Canvas) {
	col := color.NRGBA(t)
	col.A = 0xa0 // a swatch this small needs more colour to be told apart
	c.SetColor(col)
	c.Fill(c.Rectangle.Path())
}
