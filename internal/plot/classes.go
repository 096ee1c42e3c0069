package plot

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hybridkv/hybridkv/internal/stats"
)

// classesW and classesH are the size of the Classes figure.
const (
	classesW = 8 * vg.Inch
	classesH = 5 * vg.Inch
)

// groupWidth is the share of the space between two classes that a class's
// group of bars takes at most, leaving a gap between groups.
const groupWidth = 0.8

// Classes draws a grouped bar chart of latency by operation class, one bar
// per report in each class: the bar's height is the median, and a whisker
// above it reaches the P99. Reports are expected to be one per protocol on
// the same workload; a report with no operations of a class has no bar
// there. The latency axis is logarithmic, so weak operations' sub-
// millisecond bars stay visible next to strong ones' wide-area latencies.
func Classes(reports []*stats.Report, path string) error {
	if err := checkReports(reports); err != nil {
		return err
	}
	p := newPlot()
	title := withShape("Median and P99 latency by operation class", reports)
	p.X.Label.Text = "operation class"
	p.Y.Label.Text = "latency (ms)"
	names := classesOf(reports)
	p.NominalX(names...)
	// Bars start at the bottom of the axis; padding would float them above
	// it.
	p.Y.Padding = 0
	p.Add(grid(false, true))

	lo, hi := math.Inf(1), math.Inf(-1)
	var legend []legendEntry
	for i, r := range reports {
		b := &classBars{
			index: i, of: len(reports),
			color: seriesColor(i),
		}
		for c, name := range names {
			s, ok := r.Classes[name]
			if !ok || s.Count == 0 {
				continue
			}
			if !finite(s.P50Ms, s.P99Ms) {
				return fmt.Errorf("plot: report %d (%s): %s latency is not a number", i, seriesName(r, i), name)
			}
			med, p99 := clampMs(s.P50Ms), clampMs(max(s.P99Ms, s.P50Ms))
			b.bars = append(b.bars, classBar{class: c, median: med, p99: p99})
			lo, hi = min(lo, med), max(hi, p99)
		}
		p.Add(b)
		legend = append(legend, legendEntry{seriesName(r, i), []plot.Thumbnailer{b}})
	}
	if math.IsInf(lo, 0) {
		return fmt.Errorf("plot: no completed operations in any report")
	}
	legend = append(legend, legendEntry{"P99 (whisker)", []plot.Thumbnailer{whiskerThumb{}}})
	// Half a decade below the lowest median, so that even the shortest
	// bar stands clear of the axis, and some room above the highest P99,
	// so that no whisker ends on the frame.
	logAxis(&p.Y, lo/3, hi*2)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	layout := [][]*plot.Plot{{p}}
	return save(path, classesW, classesH, func(dc draw.Canvas) { drawGrid(dc, title, legend, layout) })
}

// classBar is one report's bar in one class.
type classBar struct {
	class       int
	median, p99 float64
}

// classBars draws one report's bars, offset within each class's group by
// the report's index so that the reports' bars stand side by side. Bar
// positions are in data units, not fixed lengths, so the groups fill their
// slots at any figure size.
type classBars struct {
	index, of int
	color     color.Color
	bars      []classBar
}

// whiskerStyle is the line of a P99 whisker: dark, to show against any
// bar colour and against the background.
var whiskerStyle = draw.LineStyle{Color: color.Gray{Y: 0x30}, Width: vg.Points(1.2)}

var valueStyle = textStyle(8)

var outlineStyle = draw.LineStyle{Color: color.Gray{Y: 0x40}, Width: vg.Points(0.5)}

func (b *classBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	// A bar never takes more than a third of a group, or a lone report's
	// bars would be slabs.
	slot := groupWidth / float64(max(b.of, 3))
	half := slot * 0.85 / 2
	bottom := trY(p.Y.Min)
	for _, bar := range b.bars {
		x := float64(bar.class) + slot*(float64(b.index)-float64(b.of-1)/2)
		left, right, mid := trX(x-half), trX(x+half), trX(x)
		top := trY(bar.median)
		box := []vg.Point{{X: left, Y: bottom}, {X: left, Y: top}, {X: right, Y: top}, {X: right, Y: bottom}}
		c.FillPolygon(b.color, c.ClipPolygonY(box))
		c.StrokeLines(outlineStyle, c.ClipLinesY(append(box, box[0]))...)
		// The median's value, inside the top of the bar: a log axis shows
		// orders of magnitude well but exact values poorly. It is left out
		// where it would not fit, with many reports side by side.
		value := formatLatency(bar.median)
		if top-bottom > 2*valueStyle.Height(value) && valueStyle.Width(value) < right-left-vg.Points(2) {
			c.FillText(valueStyle, vg.Point{X: mid, Y: top - vg.Points(2)}, value)
		}
		if bar.p99 > bar.median {
			tip := trY(bar.p99)
			capW := (right - left) / 3
			c.StrokeLines(whiskerStyle, c.ClipLinesY(
				[]vg.Point{{X: mid, Y: top}, {X: mid, Y: tip}},
				[]vg.Point{{X: mid - capW, Y: tip}, {X: mid + capW, Y: tip}},
			)...)
		}
	}
}

// Thumbnail draws the report's colour in the legend.
func (b *classBars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y},
	}
	c.FillPolygon(b.color, c.ClipPolygonY(pts))
	c.StrokeLines(outlineStyle, append(pts, pts[0]))
}

// whiskerThumb explains the whisker in the legend.
type whiskerThumb struct{}

func (whiskerThumb) Thumbnail(c *draw.Canvas) {
	mid := (c.Min.X + c.Max.X) / 2
	capW := (c.Max.X - c.Min.X) / 4
	c.StrokeLines(whiskerStyle,
		[]vg.Point{{X: mid, Y: c.Min.Y}, {X: mid, Y: c.Max.Y}},
		[]vg.Point{{X: mid - capW, Y: c.Max.Y}, {X: mid + capW, Y: c.Max.Y}})
}
