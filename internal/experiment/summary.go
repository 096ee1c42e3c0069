package experiment

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hybridkv/hybridkv/internal/plot"
)

// write writes the experiment's CSV, figure and summary into dir.
func (s Spec) write(dir string, points []Point, results map[Point]Result, o Options) error {
	t := newTable(s, points, results)
	var csvBuf bytes.Buffer
	if err := t.writeCSV(&csvBuf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, s.Name+".csv"), csvBuf.Bytes(), 0o644); err != nil {
		return err
	}
	figure := s.Name + ".png"
	if err := t.draw(filepath.Join(dir, figure)); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, s.Name+".md"), []byte(t.summary(o, figure)), 0o644)
}

// draw draws the experiment's figure: each metric against the parameter,
// or throughput over time.
func (t *table) draw(path string) error {
	s := t.spec
	title := fmt.Sprintf("%s (%s)", s.Name, t.shape())
	switch {
	case s.Timeline:
		return plot.Panels(title, []plot.Panel{t.timelinePanel()}, path)
	case s.Param == "":
		return plot.Panels(title, t.protocolPanels(), path)
	}
	var panels []plot.Panel
	for _, m := range s.Metrics {
		pn := plot.Panel{Title: m.Title, XLabel: axisLabel(s.Param, s.Unit), YLabel: m.Unit, LogY: m.Log, XTicks: s.Categories}
		for _, name := range t.protocols {
			c := plot.Curve{Name: name}
			for _, v := range t.values {
				sp := t.metric(m, name, v)
				c.X, c.Mean, c.Lo, c.Hi = append(c.X, v), append(c.Mean, sp.Mean), append(c.Lo, sp.Lo), append(c.Hi, sp.Hi)
			}
			pn.Curves = append(pn.Curves, c)
		}
		panels = append(panels, pn)
	}
	return plot.Panels(title, panels, path)
}

// protocolPanels draw each metric of an experiment without a parameter
// by protocol: one point each, the protocols along the x axis.
func (t *table) protocolPanels() []plot.Panel {
	var panels []plot.Panel
	for _, m := range t.spec.Metrics {
		pn := plot.Panel{Title: m.Title, XLabel: "protocol", YLabel: m.Unit, LogY: m.Log, XTicks: t.protocols}
		for i, name := range t.protocols {
			sp := t.metric(m, name, t.values[0])
			pn.Curves = append(pn.Curves, plot.Curve{Name: name, X: []float64{float64(i)},
				Mean: []float64{sp.Mean}, Lo: []float64{sp.Lo}, Hi: []float64{sp.Hi}})
		}
		panels = append(panels, pn)
	}
	return panels
}

// timelinePanel is throughput second by second from the start of each
// run, the repeats' mean with their lowest and highest.
func (t *table) timelinePanel() plot.Panel {
	pn := plot.Panel{Title: "throughput over time (leader killed, then restarted)", XLabel: "seconds from the start of the run",
		YLabel: "ops/s", Dense: true}
	for _, name := range t.protocols {
		var series [][]float64
		for _, r := range t.runs[name][t.values[0]] {
			series = append(series, throughputOverTime(r.Report))
		}
		c := plot.Curve{Name: name}
		for sec := 0; ; sec++ {
			var xs []float64
			for _, s := range series {
				if sec < len(s) {
					xs = append(xs, s[sec])
				}
			}
			if len(xs) == 0 {
				break
			}
			sp := spreadOf(xs)
			c.X, c.Mean, c.Lo, c.Hi = append(c.X, float64(sec)), append(c.Mean, sp.Mean), append(c.Lo, sp.Lo), append(c.Hi, sp.Hi)
		}
		pn.Curves = append(pn.Curves, c)
	}
	return pn
}

func axisLabel(param, unit string) string {
	if unit == "" {
		return param
	}
	return param + " (" + unit + ")"
}

// builds names the builds the runs were made with, with how many runs
// each when there were several.
func (t *table) builds() string {
	count := map[string]int{}
	var order []string
	for _, v := range t.values {
		for _, name := range t.protocols {
			for _, r := range t.runs[name][v] {
				if count[r.Build] == 0 {
					order = append(order, r.Build)
				}
				count[r.Build]++
			}
		}
	}
	if len(order) == 1 {
		return order[0]
	}
	var parts []string
	for _, b := range order {
		parts = append(parts, fmt.Sprintf("%s (%d runs)", b, count[b]))
	}
	return strings.Join(parts, ", ")
}

// shape describes the cluster the runs had, from the first report.
func (t *table) shape() string {
	for _, name := range t.protocols {
		for _, rs := range t.runs[name] {
			for _, r := range rs {
				return fmt.Sprintf("%d replicas, %d clients × %d sessions", r.Report.Replicas, r.Report.Clients, r.Report.SessionsPerClient)
			}
		}
	}
	return "no runs"
}

// summary is the experiment's markdown summary.
func (t *table) summary(o Options, figure string) string {
	s := t.spec
	var b strings.Builder
	fmt.Fprintf(&b, "# Experiment %s\n\n%s\n\n", s.Name, s.Question)
	fmt.Fprintf(&b, "- Command: `%s`\n", o.Command)
	runs := max(o.Runs, 1)
	each := "hybridkv bench --protocol P"
	if s.Param != "" {
		each += " --" + s.Param + " V"
	}
	if s.Flags != nil {
		each += " " + s.Flags(o.Quick)
	}
	fmt.Fprintf(&b, "- Each point: `%s`, %d run(s) each, rounds alternating (every point's first run before any second)\n", each, runs)
	fmt.Fprintf(&b, "- Build: %s\n- Machine: %s\n- Cluster: %s\n", t.builds(), o.Machine, t.shape())
	if o.Quick {
		b.WriteString("- **Quick mode**: short runs for trying the experiment out; not numbers to report\n")
	}
	fmt.Fprintf(&b, "\n![%s](%s)\n\n", s.Name, figure)
	if s.Timeline {
		t.timelineTable(&b)
	} else {
		t.pointTable(&b)
	}
	if s.Peak {
		t.peakTable(&b)
	}
	if len(s.Relative) > 0 {
		t.relativeTable(&b)
	}
	t.publishedTable(&b)
	t.problems(&b)
	return b.String()
}

// pointTable lists each point's metrics, means over the repeats with
// their range.
func (t *table) pointTable(b *strings.Builder) {
	s := t.spec
	cols := append([]Metric{Throughput}, withoutThroughput(s.Metrics)...)
	// An experiment without a parameter has one point per protocol and no
	// column for its value.
	param := s.Param != ""
	b.WriteString("| protocol |")
	if param {
		b.WriteString(" " + s.Param + " |")
	}
	for _, m := range cols {
		fmt.Fprintf(b, " %s (%s) |", m.Title, m.Unit)
	}
	b.WriteString(" failed |\n|---|")
	if param {
		b.WriteString("---:|")
	}
	b.WriteString(strings.Repeat("---:|", len(cols)+1) + "\n")
	for _, name := range t.protocols {
		for _, v := range t.values {
			fmt.Fprintf(b, "| %s |", name)
			if param {
				fmt.Fprintf(b, " %s |", s.valueName(v))
			}
			for _, m := range cols {
				fmt.Fprintf(b, " %s |", formatSpread(t.metric(m, name, v)))
			}
			fmt.Fprintf(b, " %d |\n", t.failed(name, v))
		}
	}
	b.WriteString("\nMeans over the repeats, their lowest and highest in brackets.\n\n")
}

func withoutThroughput(ms []Metric) []Metric {
	var out []Metric
	for _, m := range ms {
		if m.Column != Throughput.Column {
			out = append(out, m)
		}
	}
	return out
}

// relativeTable gives each protocol's relative metrics at every value as
// ratios to the first value's: how far each moved as the parameter grew.
func (t *table) relativeTable(b *strings.Builder) {
	s := t.spec
	fmt.Fprintf(b, "Relative to %s=%s (the mean at each value over the mean there):\n\n| protocol | metric |", s.Param, s.valueName(t.values[0]))
	for _, v := range t.values[1:] {
		fmt.Fprintf(b, " %s |", s.valueName(v))
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(t.values)-1) + "\n")
	for _, name := range t.protocols {
		for _, m := range s.Relative {
			base := t.metric(m, name, t.values[0]).Mean
			fmt.Fprintf(b, "| %s | %s |", name, m.Title)
			for _, v := range t.values[1:] {
				fmt.Fprintf(b, " %s |", formatRatio(t.metric(m, name, v).Mean/base))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
}

func formatRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "–"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// timelineTable lists, per protocol, the throughput and how long strong
// operations were unavailable after each fault.
func (t *table) timelineTable(b *strings.Builder) {
	b.WriteString("| protocol | throughput (ops/s) | strong operations unavailable after the kill (ms, per client site, every run) | failed |\n|---|---:|---|---:|\n")
	for _, name := range t.protocols {
		v := t.values[0]
		var outages []string
		for _, r := range t.runs[name][v] {
			for _, f := range r.Report.Faults {
				outages = append(outages, formatOutage(f.UnavailableMs, r.Report.FaultSites))
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d |\n", name, formatSpread(t.metric(Throughput, name, v)),
			strings.Join(outages, "; "), t.failed(name, v))
	}
	b.WriteString("\n")
}

func formatOutage(ms map[string]float64, sites []string) string {
	var parts []string
	for _, site := range sites {
		if v, ok := ms[site]; ok {
			parts = append(parts, format(v))
		} else {
			parts = append(parts, "never")
		}
	}
	return strings.Join(parts, "/")
}

// peakTable lists each protocol's peak under the 100 ms rule.
func (t *table) peakTable(b *strings.Builder) {
	fmt.Fprintf(b, "Peak throughput (the highest whose average and median latency stay within 100 ms), over %s:\n\n", t.spec.Param)
	b.WriteString("| protocol | peak (ops/s) | at " + t.spec.Param + " (per run) |\n|---|---:|---|\n")
	for _, name := range t.protocols {
		sp, at := t.peak(name)
		var where []string
		for _, v := range at {
			if math.IsNaN(v) {
				where = append(where, "none")
			} else {
				where = append(where, t.spec.valueName(v))
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", name, formatSpread(sp), strings.Join(where, ", "))
	}
	b.WriteString("\n")
}

// publishedTable sets the prototype's published numbers beside ours.
func (t *table) publishedTable(b *strings.Builder) {
	s := t.spec
	var rows []string
	for _, p := range s.Published {
		if _, ran := t.runs[p.Protocol]; !ran {
			continue
		}
		ours := t.ours(p)
		if ours.N == 0 {
			continue
		}
		theirs, ratio := format(p.Lo), format(ours.Mean/p.Lo)
		if p.Hi != p.Lo {
			theirs = format(p.Lo) + "–" + format(p.Hi)
			ratio = format(ours.Mean/p.Hi) + "–" + format(ours.Mean/p.Lo)
		}
		what := p.Column
		if !math.IsNaN(p.At) {
			what += " at " + s.Param + "=" + s.valueName(p.At)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s (%s) | %s | %s |", p.Protocol, what, theirs, p.Source, formatSpread(ours), ratio))
	}
	if len(rows) == 0 && s.Differences == "" {
		return
	}
	b.WriteString("## The prototype's published numbers beside ours\n\n")
	if len(rows) > 0 {
		b.WriteString("| protocol | what | theirs | ours | ours / theirs |\n|---|---|---:|---:|---:|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n\n")
	}
	if s.Differences != "" {
		b.WriteString(s.Differences + "\n\n")
	}
}

// ours is our number for a published one: the peak, or the metric at the
// published value.
func (t *table) ours(p Published) spread {
	if p.Column == "peak" {
		sp, _ := t.peak(p.Protocol)
		return sp
	}
	for _, m := range csvMetrics {
		if m.Column == p.Column {
			return t.metric(m, p.Protocol, p.At)
		}
	}
	return spread{}
}

// problems lists failed operations and consistency violations, which a
// reader must not miss.
func (t *table) problems(b *strings.Builder) {
	var lines []string
	checked := 0
	for _, name := range t.protocols {
		for _, v := range t.values {
			for i, r := range t.runs[name][v] {
				if r.Checked {
					checked++
				}
				if r.Violation != "" {
					lines = append(lines, fmt.Sprintf("- **%s %s run %d: consistency violation**: %s", name, t.spec.label(v), i+1, r.Violation))
				}
			}
		}
	}
	b.WriteString("## Checks\n\n")
	switch {
	case checked == 0:
		b.WriteString("No run's history was checked (run with --check).\n")
	case len(lines) == 0:
		fmt.Fprintf(b, "Every one of the %d checked runs' histories checked clean against its protocol's claims.\n", checked)
	default:
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
}
