package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/hybridkv/hybridkv/internal/stats"
)

// pngDPI is the resolution of PNG figures: the library's default of 96 dpi
// leaves small tick labels blurry when a figure is viewed at full size.
const pngDPI = 144

// minMs is the smallest latency a log axis can show; a latency of zero
// (below the histogram's resolution) is drawn there instead.
const minMs = 0.01

// classNames are the operation classes in the order figures show them:
// strong before weak, writes, reads, scans, as in the printed report.
var classNames = func() []string {
	var names []string
	for _, c := range stats.Classes() {
		names = append(names, c.String())
	}
	return names
}()

// classesOf are the classes the figures of reports show: every class but
// the scans, which only runs of a mix with scans have, and those when some
// report has them, so that figures of runs without scans keep their
// shape.
func classesOf(reports []*stats.Report) []string {
	var out []string
	for _, c := range stats.Classes() {
		name := c.String()
		if !c.IsScan() || slices.ContainsFunc(reports, func(r *stats.Report) bool { return r != nil && r.Classes[name].Count > 0 }) {
			out = append(out, name)
		}
	}
	return out
}

// errNoReports is returned for an empty input.
var errNoReports = errors.New("plot: no reports to draw")

// sansFont is used for all text: the library's serif default reads poorly
// at the small sizes of tick labels.
var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// save draws a figure of size w x h and writes it to path, in the format
// its extension names. Nothing is written if drawing fails, so a failed
// figure never leaves a truncated file behind.
func save(path string, w, h vg.Length, drawFig func(draw.Canvas)) error {
	c, err := newCanvas(path, w, h)
	if err != nil {
		return err
	}
	if err := safely(func() { drawFig(draw.New(c)) }); err != nil {
		return fmt.Errorf("plot: drawing %s: %w", path, err)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot: encoding %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func newCanvas(path string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(
			vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))}, nil
	case ".svg":
		return vgsvg.New(w, h), nil
	default:
		return nil, fmt.Errorf("plot: unsupported figure format %q for %s (want .png or .svg)", ext, path)
	}
}

// safely runs f, turning a panic into an error: the plotting library
// reports some invalid input (a non-positive value on a log axis, say) by
// panicking, and a figure is not worth crashing the bench command over
// after the run's results are in.
func safely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// newPlot returns a plot with the text styles every figure shares.
func newPlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font = font.From(sansFont, 12)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, 11)
		a.Tick.Label.Font = font.From(sansFont, 9)
	}
	return p
}

// grid draws light lines at the labelled ticks, which is what makes values
// readable off a log axis; an axis passed as false gets none.
func grid(vertical, horizontal bool) *plotter.Grid {
	g := plotter.NewGrid()
	light := draw.LineStyle{Color: color.Gray{Y: 0xd0}, Width: vg.Points(0.5)}
	g.Vertical, g.Horizontal = light, light
	if !vertical {
		g.Vertical.Color = nil
	}
	if !horizontal {
		g.Horizontal.Color = nil
	}
	return g
}

// textStyle is a sans-serif style for free text drawn on a canvas.
func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(sansFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// seriesColor is the colour of the i-th protocol in every figure: the
// library's soft palette, then its dark one, so that up to fourteen
// protocols have colours of their own.
func seriesColor(i int) color.Color {
	if n := len(plotutil.DefaultColors); i%(2*n) >= n {
		return plotutil.DarkColors[i%len(plotutil.DarkColors)]
	}
	return plotutil.Color(i)
}

// clampMs makes a latency drawable on a log axis.
func clampMs(ms float64) float64 { return max(ms, minMs) }

// finite reports whether every value is a usable number.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// logAxis sets a to a log scale spanning whole decades around [lo, hi], so
// that both ends carry a labelled tick.
func logAxis(a *plot.Axis, lo, hi float64) {
	lo, hi = clampMs(lo), clampMs(hi)
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
	a.Min = math.Pow10(decade(lo, math.Floor))
	a.Max = math.Pow10(decade(hi, math.Ceil))
	if a.Max <= a.Min {
		a.Max = a.Min * 10
	}
}

// decade rounds log10(v) with round, tolerating the rounding error of
// math.Log10 at exact powers of ten (log10(0.01) may come out as
// -1.9999999999999996, which must still count as -2).
func decade(v float64, round func(float64) float64) int {
	l := math.Log10(v)
	if r := math.Round(l); math.Abs(l-r) < 1e-9 {
		return int(r)
	}
	return int(round(l))
}

// logTicks marks a log axis: a labelled tick at every power of ten and
// unlabelled ones at its multiples, plus labels at 2 and 5 times each
// power when the axis spans two decades or less and would otherwise carry
// too few numbers to read values from. The library's own LogTicks truncates
// log10 of the axis minimum, which drops the first label whenever the
// minimum is an exact power of ten below 1.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi > lo) || !finite(lo, hi) {
		return nil
	}
	first, last := decade(lo, math.Floor), decade(hi, math.Ceil)
	dense := last-first <= 2
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		base := math.Pow10(e)
		for m := 1; m <= 9; m++ {
			v := base * float64(m)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || dense && (m == 2 || m == 5) {
				t.Label = formatTick(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// linearTicks marks a linear axis at round steps (1, 2 or 5 times a power
// of ten) giving about six labels, with unlabelled ticks halfway between.
// The library's default ticker can leave as few as two labels, printed
// with needless decimals ("2500.00").
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo, hi) {
		return nil
	}
	raw := (hi - lo) / 6
	step := math.Pow10(decade(raw, math.Floor))
	for _, m := range []float64{2, 5, 10} {
		if step >= raw {
			break
		}
		step = math.Pow10(decade(raw, math.Floor)) * m
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / step * 2); i/2*step <= hi*(1+1e-9); i++ {
		v := i / 2 * step
		t := plot.Tick{Value: v}
		if math.Mod(i, 2) == 0 {
			t.Label = formatTick(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// formatTick writes a tick's value without float noise (0.6, not
// 0.6000000000000001) and without an exponent for any value a figure here
// shows.
func formatTick(v float64) string { return strconv.FormatFloat(v, 'g', 12, 64) }

// seriesName names a report in a legend: its protocol, and its label when
// it has one, since one comparison may hold the same protocol twice.
func seriesName(r *stats.Report, i int) string {
	name := r.Protocol
	if name == "" {
		name = fmt.Sprintf("report %d", i+1)
	}
	if r.Label != "" {
		name += " (" + r.Label + ")"
	}
	return name
}

// checkReports rejects what cannot be drawn: no reports, or a nil one.
func checkReports(reports []*stats.Report) error {
	if len(reports) == 0 {
		return errNoReports
	}
	for i, r := range reports {
		if r == nil {
			return fmt.Errorf("plot: report %d is nil", i)
		}
	}
	return nil
}

// clusterShape describes the deployment the reports share, for a title:
// the replica count and the clients and sessions per client, leaving out
// whatever differs between reports (the swept parameter of a sweep, say).
func clusterShape(reports []*stats.Report) string {
	same := func(f func(*stats.Report) int) (int, bool) {
		v := f(reports[0])
		for _, r := range reports[1:] {
			if f(r) != v {
				return 0, false
			}
		}
		return v, true
	}
	var parts []string
	if n, ok := same(func(r *stats.Report) int { return r.Replicas }); ok && n > 0 {
		parts = append(parts, plural(n, "replica"))
	}
	clients, cok := same(func(r *stats.Report) int { return r.Clients })
	sessions, sok := same(func(r *stats.Report) int { return r.SessionsPerClient })
	cok = cok && clients > 0
	sok = sok && sessions > 0
	switch {
	case cok && sok:
		parts = append(parts, fmt.Sprintf("%s × %s", plural(clients, "client"), plural(sessions, "session")))
	case cok:
		parts = append(parts, plural(clients, "client"))
	case sok:
		parts = append(parts, plural(sessions, "session")+" per client")
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// withShape appends the cluster shape to a title, when there is one.
func withShape(title string, reports []*stats.Report) string {
	if s := clusterShape(reports); s != "" {
		return title + " (" + s + ")"
	}
	return title
}

// emptyPanel is a panel with nothing to show but a note saying why, so a
// grid of panels keeps its layout.
func emptyPanel(title, note string) *plot.Plot {
	p := newPlot()
	p.Title.Text = title
	p.HideAxes()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Add(noteText(note))
	return p
}

// noteText draws a line of text at the centre of a plot's data area.
type noteText string

func (n noteText) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(10)
	sty.Color = color.Gray{Y: 0x60}
	sty.YAlign = draw.YCenter
	c.FillText(sty, c.Center(), string(n))
}

// formatLatency writes a latency in milliseconds to two or three
// significant digits, as precise as a figure can be read.
func formatLatency(ms float64) string {
	switch {
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 0, 64)
	case ms >= 1:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	case ms >= 0.1:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	default:
		return strconv.FormatFloat(ms, 'f', 3, 64)
	}
}

// margin separates a figure's contents from its edges and from each other.
const margin = vg.Length(8)

// legendEntry is one series in a figure-wide legend.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// drawGrid draws plots in a grid (which may be 1x1) under a title and a
// legend shared by all of them, with the panels' data areas aligned so they
// compare at a glance. A legend above the panels, rather than the
// library's own inside each, can never hide a bar or a curve, and is not
// repeated in every panel.
func drawGrid(dc draw.Canvas, title string, legend []legendEntry, plots [][]*plot.Plot) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	sty := textStyle(13)
	top := dc.Max.Y - margin
	dc.FillText(sty, vg.Point{X: dc.Center().X, Y: top}, title)
	top -= sty.Rectangle(title).Size().Y + margin/2
	top = drawLegendRows(dc, top, legend)
	tiles := draw.Tiles{
		Rows: len(plots), Cols: len(plots[0]),
		PadTop: dc.Max.Y - top + margin, PadBottom: margin, PadLeft: margin, PadRight: 2 * margin,
		PadX: 3 * margin, PadY: 2 * margin,
	}
	canvases := plot.Align(plots, tiles, dc)
	for i, row := range plots {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
}

// drawLegendRows draws the entries in centred rows below top, wrapping
// when a row would be wider than the canvas, and returns where the last
// row ends.
func drawLegendRows(dc draw.Canvas, top vg.Length, entries []legendEntry) vg.Length {
	sty := textStyle(10)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	const (
		thumbW = vg.Length(24)
		gap    = vg.Length(4)
		space  = vg.Length(18)
	)
	rowH := sty.Rectangle("Mg").Size().Y + gap
	width := func(e legendEntry) vg.Length { return thumbW + gap + sty.Width(e.name) }
	avail := dc.Max.X - dc.Min.X - 2*margin
	for len(entries) > 0 {
		n, w := 1, width(entries[0])
		for n < len(entries) && w+space+width(entries[n]) <= avail {
			w += space + width(entries[n])
			n++
		}
		x := dc.Center().X - w/2
		y := top - rowH/2
		for _, e := range entries[:n] {
			icon := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - rowH/2 + gap/2},
				Max: vg.Point{X: x + thumbW, Y: y + rowH/2 - gap/2},
			}}
			for _, t := range e.thumbs {
				t.Thumbnail(&icon)
			}
			dc.FillText(sty, vg.Point{X: x + thumbW + gap, Y: y}, e.name)
			x += width(e) + space
		}
		entries = entries[n:]
		top -= rowH
	}
	return top
}
