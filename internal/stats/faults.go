package stats

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Fault is one injected fault and what it cost the clients.
type Fault struct {
	Kind string `json:"kind"` // kill, pause, partition, link, restart-all
	What string `json:"what"` // the fault as injected, naming the replicas
	// AtS and HealedS are offsets from the start of the run, in seconds.
	AtS     float64 `json:"at_s"`
	HealedS float64 `json:"healed_s"`
	// UnavailableMs is, per client site, the time from the injection to
	// the completion of the first strong operation invoked after it. A
	// site missing from the map completed none before the run ended.
	UnavailableMs map[string]float64 `json:"unavailable_ms"`
	// Failed counts operations invoked while this fault was the latest
	// one injected that then failed (timed out or errored): their effect
	// is unknown, and the checker treats them as possibly applied.
	Failed int64 `json:"failed"`
}

// Timeline is throughput over time, per operation class.
type Timeline struct {
	BucketMs int `json:"bucket_ms"`
	// Ops maps a class name to its completions in each bucket, from the
	// start of the run.
	Ops map[string][]int64 `json:"ops"`
}

// FaultKindSummary aggregates the faults of one kind: every (fault, client
// site) pair is one sample of unavailability.
type FaultKindSummary struct {
	Kind     string
	Faults   int
	Samples  int     // sites that recovered
	Never    int     // sites that completed no strong operation after the fault
	MedianMs float64 // over the samples; NaN without any
	MaxMs    float64
	Failed   int64
}

// SummarizeFaults groups faults by kind, in order of first appearance.
func SummarizeFaults(faults []Fault, sites []string) []FaultKindSummary {
	var order []string
	samples := make(map[string][]float64)
	out := make(map[string]*FaultKindSummary)
	for _, f := range faults {
		s := out[f.Kind]
		if s == nil {
			s = &FaultKindSummary{Kind: f.Kind}
			out[f.Kind] = s
			order = append(order, f.Kind)
		}
		s.Faults++
		s.Failed += f.Failed
		for _, site := range sites {
			if ms, ok := f.UnavailableMs[site]; ok {
				samples[f.Kind] = append(samples[f.Kind], ms)
			} else {
				s.Never++
			}
		}
	}
	var res []FaultKindSummary
	for _, k := range order {
		s := out[k]
		v := samples[k]
		slices.Sort(v)
		s.Samples = len(v)
		s.MedianMs, s.MaxMs = math.NaN(), math.NaN()
		if n := len(v); n > 0 {
			s.MedianMs = v[n/2]
			if n%2 == 0 {
				s.MedianMs = (v[n/2-1] + v[n/2]) / 2
			}
			s.MaxMs = v[n-1]
		}
		res = append(res, *s)
	}
	return res
}

// writeFaults prints each fault with its cost, then the table per kind.
func (r *Report) writeFaults(b *strings.Builder) {
	if len(r.Faults) == 0 {
		return
	}
	sites := r.faultSites()
	b.WriteString("faults (strong-operation unavailability per client site, operations failed):\n")
	for _, f := range r.Faults {
		var parts []string
		for _, s := range sites {
			if ms, ok := f.UnavailableMs[s]; ok {
				parts = append(parts, fmt.Sprintf("%s %s", s, fmtMs(ms)))
			} else {
				parts = append(parts, s+" never")
			}
		}
		fmt.Fprintf(b, "  +%6.1fs..+%6.1fs  %-11s %s | %s | failed %d\n",
			f.AtS, f.HealedS, f.Kind, f.What, strings.Join(parts, ", "), f.Failed)
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "fault type\tfaults\tunavailable median\tmax\tnever recovered\tfailed ops\t")
	for _, s := range SummarizeFaults(r.Faults, sites) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t\n", s.Kind, s.Faults, fmtMs(s.MedianMs), fmtMs(s.MaxMs), s.Never, s.Failed)
	}
	tw.Flush()
}

// faultSites are the client sites any fault was measured at, sorted.
func (r *Report) faultSites() []string {
	set := make(map[string]struct{})
	for _, f := range r.Faults {
		for s := range f.UnavailableMs {
			set[s] = struct{}{}
		}
	}
	for _, s := range r.FaultSites {
		set[s] = struct{}{}
	}
	return slices.Sorted(maps.Keys(set))
}

func fmtMs(ms float64) string {
	switch {
	case math.IsNaN(ms):
		return "-"
	case ms >= 1000:
		return fmt.Sprintf("%.2f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
