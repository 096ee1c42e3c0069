package plot

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"maps"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hybridkv/hybridkv/internal/stats"
)

const (
	overTimeW = 8 * vg.Inch
	overTimeH = 9 * vg.Inch
	// overTimeMachineH makes room for the machine probe's panel.
	overTimeMachineH = 12 * vg.Inch
	// machineBin is the span each point of the machine panel averages:
	// single seconds of a few batches each are noisy.
	machineBin = 10.0
)

// OverTime draws one run's timeline in three panels sharing the time axis:
// the clients' throughput, each follower's apply lag, and each replica's
// resident memory, so a run that slows down can be read against what grew
// meanwhile; and when the machine probe ran, a fourth with the machine's
// memory latency, so a run that slowed with its machine shows it. A
// replica keeps its colour in both replica panels.
func OverTime(r *stats.Report, path string) error {
	if r == nil || r.OverTime == nil || r.OverTime.Series == nil {
		return errors.New("plot: the report has no timeline")
	}
	tl := r.OverTime.Series
	var ids []uint64
	for id := range tl.RSSMB {
		ids = append(ids, id)
	}
	for id := range tl.Lag {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	colors := make(map[uint64]int, len(ids))
	for i, id := range ids {
		colors[id] = i
	}

	end := float64(len(tl.Throughput))
	for _, series := range []map[uint64][]stats.Point{tl.Lag, tl.RSSMB} {
		for _, pts := range series {
			if len(pts) > 0 {
				end = max(end, pts[len(pts)-1].Seconds)
			}
		}
	}
	tput := timePanel("Clients' throughput", "ops/s", end)
	var pts plotter.XYs
	for s, n := range tl.Throughput {
		pts = append(pts, plotter.XY{X: float64(s) + 0.5, Y: n})
	}
	tl0, err := addLine(tput, pts, -1)
	if err != nil {
		return err
	}
	empty := map[*plot.Plot]bool{tput: tl0 == nil}
	lag := timePanel("Follower apply lag (leader's commit index − follower's applied index)", "entries", end)
	rss := timePanel("Replica resident memory", "MB", end)
	var legend []legendEntry
	lines := make(map[uint64]*plotter.Line)
	for _, panel := range []struct {
		p      *plot.Plot
		series map[uint64][]stats.Point
	}{{lag, tl.Lag}, {rss, tl.RSSMB}} {
		empty[panel.p] = true
		for _, id := range slices.Sorted(maps.Keys(panel.series)) {
			var xy plotter.XYs
			for _, p := range panel.series[id] {
				xy = append(xy, plotter.XY{X: p.Seconds, Y: p.Value})
			}
			l, err := addLine(panel.p, xy, colors[id])
			if err != nil {
				return err
			}
			if l != nil {
				empty[panel.p] = false
				if lines[id] == nil {
					lines[id] = l
				}
			}
		}
	}
	for _, id := range ids {
		if l := lines[id]; l != nil {
			legend = append(legend, legendEntry{fmt.Sprintf("replica %d", id), []plot.Thumbnailer{l}})
		}
	}
	for _, p := range []*plot.Plot{tput, lag, rss} {
		if empty[p] {
			p.Y.Max = 1
			p.Add(noteText("no samples"))
		}
	}
	title := fmt.Sprintf("%s over time", r.Protocol)
	if r.Label != "" {
		title += " (" + r.Label + ")"
	}
	layout := [][]*plot.Plot{{tput}, {lag}, {rss}}
	height := overTimeH
	if len(tl.MachineLoadNs) > 0 {
		machine := timePanel(fmt.Sprintf("Machine probe: CPU time per dependent load from memory, %g s means (higher: a slower machine)", machineBin), "ns", end)
		means := binned(tl.MachineLoadNs, machineBin)
		if _, err := addLine(machine, means, -1); err != nil {
			return err
		}
		// Its moves are a tenth or two of its level: an axis from zero
		// would flatten them.
		machine.Y.Min = 0.8 * slices.MinFunc(means, func(a, b plotter.XY) int { return cmp.Compare(a.Y, b.Y) }).Y
		layout, height = append(layout, []*plot.Plot{machine}), overTimeMachineH
	}
	return save(path, overTimeW, height, func(dc draw.Canvas) { drawGrid(dc, title, legend, layout) })
}

// binned averages points over consecutive spans of width seconds, each
// drawn at its span's middle.
func binned(pts []stats.Point, width float64) plotter.XYs {
	sums := make(map[int]float64)
	counts := make(map[int]int)
	for _, p := range pts {
		b := int(p.Seconds / width)
		sums[b] += p.Value
		counts[b]++
	}
	var xy plotter.XYs
	for _, b := range slices.Sorted(maps.Keys(sums)) {
		xy = append(xy, plotter.XY{X: (float64(b) + 0.5) * width, Y: sums[b] / float64(counts[b])})
	}
	return xy
}

// timePanel is a panel over the run's first end seconds with a linear y
// axis from 0; every panel of a figure gets the same time axis.
func timePanel(title, unit string, end float64) *plot.Plot {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "seconds since start"
	p.Y.Label.Text = unit
	p.X.Min, p.X.Max = 0, max(end, 1)
	p.Y.Min = 0
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	p.Add(grid(true, true))
	return p
}

// addLine draws one series in the i-th series colour (black for i < 0)
// and returns its line, or nil for an empty series.
func addLine(p *plot.Plot, xy plotter.XYs, i int) (*plotter.Line, error) {
	if len(xy) == 0 {
		return nil, nil
	}
	for _, v := range xy {
		if !finite(v.X, v.Y) {
			return nil, fmt.Errorf("plot: %s: a sample is not a number", p.Title.Text)
		}
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.Color = color.Black
	if i >= 0 {
		l.Color = seriesColor(i)
	}
	l.Width = vg.Points(1.5)
	p.Add(l)
	return l, nil
}
