package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/hybridkv/hybridkv/internal/stats"
)

// comparedClasses are the per-class columns of a comparison, in order:
// the scans last, so that the CSV's earlier columns stay where they were
// before scans had classes of their own.
var comparedClasses = []stats.Class{stats.StrongWrite, stats.StrongRead, stats.WeakWrite, stats.WeakRead, stats.StrongScan, stats.WeakScan}

// WriteComparison prints one row per report: throughput, fast-path ratio,
// and median / P99 per level and per class; a scan class only when some
// report has scans of it.
func WriteComparison(w io.Writer, reports []*stats.Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	labelled := slices.ContainsFunc(reports, func(r *stats.Report) bool { return r.Label != "" })
	if labelled {
		fmt.Fprint(tw, "run\t")
	}
	fmt.Fprint(tw, "protocol\tops/s\tfast path\tstrong p50/p99\tweak p50/p99")
	columns := shownClasses(reports)
	for _, c := range columns {
		fmt.Fprintf(tw, "\t%s p50/p99", c)
	}
	fmt.Fprintln(tw, "\t")
	for _, r := range reports {
		if labelled {
			fmt.Fprintf(tw, "%s\t", r.Label)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s", r.Protocol, r.Throughput, fastPath(r),
			pair(r.Strong), pair(r.Weak))
		for _, c := range columns {
			fmt.Fprintf(tw, "\t%s", pair(r.Classes[c.String()]))
		}
		fmt.Fprintln(tw, "\t")
	}
	return tw.Flush()
}

// shownClasses are the classes a comparison's table gives columns: the
// scan classes only when some report has scans of them, so a comparison of
// runs without scans stays as narrow as it was.
func shownClasses(reports []*stats.Report) []stats.Class {
	var out []stats.Class
	for _, c := range comparedClasses {
		if !c.IsScan() || slices.ContainsFunc(reports, func(r *stats.Report) bool { return r.Classes[c.String()].Count > 0 }) {
			out = append(out, c)
		}
	}
	return out
}

func fastPath(r *stats.Report) string {
	if !r.FastPathKnown {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*r.FastPathRatio)
}

func pair(s stats.ClassSummary) string {
	if s.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f / %.2f", s.P50Ms, s.P99Ms)
}

// WriteCSV writes the comparison as CSV, one row per report, with a label
// column for sweeps.
func WriteCSV(w io.Writer, labels []string, reports []*stats.Report) error {
	cw := csv.NewWriter(w)
	header := []string{"protocol", "label", "replicas", "clients", "sessions_per_client", "ops", "failed",
		"throughput", "fast_path_ratio", "cpu_us_per_op"}
	columns := []string{"strong", "weak", "all"}
	for _, c := range comparedClasses {
		columns = append(columns, c.String())
	}
	for _, c := range columns {
		header = append(header, c+"_count", c+"_avg_ms", c+"_p50_ms", c+"_p99_ms", c+"_p999_ms", c+"_max_ms")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for i, r := range reports {
		label := ""
		if i < len(labels) {
			label = labels[i]
		}
		row := []string{r.Protocol, label, strconv.Itoa(r.Replicas), strconv.Itoa(r.Clients),
			strconv.Itoa(r.SessionsPerClient), strconv.FormatInt(r.Ops, 10), strconv.FormatInt(r.Failed, 10),
			f(r.Throughput), f(r.FastPathRatio), f(r.CPUMicrosPerOp)}
		summaries := []stats.ClassSummary{r.Strong, r.Weak, r.All}
		for _, c := range comparedClasses {
			summaries = append(summaries, r.Classes[c.String()])
		}
		for _, s := range summaries {
			row = append(row, strconv.FormatInt(s.Count, 10), f(s.AvgMs), f(s.P50Ms), f(s.P99Ms), f(s.P999Ms), f(s.MaxMs))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Peak returns the report with the highest throughput whose average and
// median latency over all operations both stay within limitMs (the seeds'
// rule, with 100 ms), or nil.
func Peak(reports []*stats.Report, limitMs float64) *stats.Report {
	var best *stats.Report
	for _, r := range reports {
		if r.All.AvgMs <= limitMs && r.All.P50Ms <= limitMs && (best == nil || r.Throughput > best.Throughput) {
			best = r
		}
	}
	return best
}
