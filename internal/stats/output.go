package stats

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for a human: a summary header, latencies per
// class, each client's share, CPU use and notes.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	r.writeHeader(&b)
	r.writeClasses(&b)
	r.writeClients(&b)
	r.writeCPU(&b)
	r.writeOverTime(&b)
	r.writeFaults(&b)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) writeHeader(b *strings.Builder) {
	fast := "n/a"
	if r.FastPathKnown {
		fast = fmt.Sprintf("%.1f%%", 100*r.FastPathRatio)
	}
	fmt.Fprintf(b, "%s | %d replicas | %d clients x %d sessions | %.1f ops/s | fast path %s | cpu %.1f µs/op",
		r.Protocol, r.Replicas, r.Clients, r.SessionsPerClient, r.Throughput, fast, r.CPUMicrosPerOp)
	if r.Label != "" {
		fmt.Fprintf(b, " | %s", r.Label)
	}
	fmt.Fprintf(b, "\nwindow %.1f s starting at +%.1f s | ops %d | failed %d | excluded %d\n",
		r.WindowSeconds, r.WindowOffsetSeconds, r.Ops, r.Failed, r.Excluded)
	if len(r.Paths) > 0 {
		fmt.Fprintf(b, "paths: %s", joinPaths(r.Paths, r.PathMeanMs))
		if len(r.SlowReasons) > 0 {
			fmt.Fprintf(b, " | slow because: %s", joinCounts(r.SlowReasons))
		}
		b.WriteString("\n")
	}
}

// joinPaths prints path counts, each with its mean latency when known:
// "fast 3 (avg 1.20 ms), slow 1 (avg 4.00 ms)".
func joinPaths(counts map[string]int64, means map[string]float64) string {
	parts := make([]string, 0, len(counts))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		part := fmt.Sprintf("%s %d", k, counts[k])
		if mean, ok := means[k]; ok {
			part += fmt.Sprintf(" (avg %.2f ms)", mean)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// joinCounts prints a count map as "a 1, b 2" in key order.
func joinCounts(m map[string]int64) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func (r *Report) writeClasses(b *strings.Builder) {
	tw := newTable(b)
	const width = len("strong-write")
	fmt.Fprintf(tw, "%-*s\tcount\tavg ms\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\t\n", width, "class")
	for _, c := range classes {
		if s, ok := r.Classes[c.String()]; ok {
			writeSummaryRow(tw, width, c.String(), s)
		}
	}
	if r.Strong.Count > 0 && r.Weak.Count > 0 {
		writeSummaryRow(tw, width, "strong", r.Strong)
		writeSummaryRow(tw, width, "weak", r.Weak)
	}
	writeSummaryRow(tw, width, "all", r.All)
	tw.Flush()
}

// newTable right-aligns columns, which suits numbers; the first column is
// padded by hand so that names stay left-aligned.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

func writeSummaryRow(w io.Writer, width int, name string, s ClassSummary) {
	fmt.Fprintf(w, "%-*s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n",
		width, name, s.Count, s.AvgMs, s.P50Ms, s.P99Ms, s.P999Ms, s.MaxMs)
}

// writeClients gives one line per client with its median latency per class,
// which is enough to spot a client that is far from the leader or starved.
func (r *Report) writeClients(b *strings.Builder) {
	if len(r.PerClient) == 0 {
		return
	}
	width := len("client")
	for _, c := range r.PerClient {
		width = max(width, len(c.Name))
	}
	tw := newTable(b)
	columns := r.clientColumns()
	fmt.Fprintf(tw, "%-*s\tops\tfailed\tops/s\t", width, "client")
	for _, c := range columns {
		fmt.Fprintf(tw, "%s p50 ms\t", c)
	}
	fmt.Fprintln(tw)
	for _, c := range r.PerClient {
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%.1f\t", width, c.Name, c.Ops, c.Failed, c.Throughput)
		for _, cl := range columns {
			if s, ok := c.Classes[cl.String()]; ok {
				fmt.Fprintf(tw, "%.2f\t", s.P50Ms)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// clientColumns are the classes the clients' table has a column for:
// every class but the scans, which only a run that had some shows, so
// that a table stays as narrow as its mix allows.
func (r *Report) clientColumns() []Class {
	var out []Class
	for _, c := range classes {
		if _, ran := r.Classes[c.String()]; ran || !c.IsScan() {
			out = append(out, c)
		}
	}
	return out
}

func (r *Report) writeCPU(b *strings.Builder) {
	if len(r.CPU) == 0 {
		return
	}
	parts := make([]string, len(r.CPU))
	for i, u := range r.CPU {
		parts[i] = fmt.Sprintf("%s %.2f s", u.Name, u.Seconds)
	}
	fmt.Fprintf(b, "cpu: %s\n", strings.Join(parts, ", "))
}
