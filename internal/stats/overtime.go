package stats

import (
	"fmt"
	"slices"
	"strings"
)

// OverTime is how a run developed, interval by interval: the clients'
// throughput and, from the replicas' metrics scraped once a second, how far
// each follower's applied state trailed the leader's commit index, the
// replicas' resident memory and the leader changes. A run that slows down
// or grows shows it here rather than as a lower average.
type OverTime struct {
	IntervalSeconds float64    `json:"interval_seconds"`
	Intervals       []Interval `json:"intervals"`
	// Memory is each replica's resident set at the first scrape, near two
	// minutes into the run (if it lasted that long) and at the last.
	Memory []ReplicaMemory `json:"memory"`
	// ClientMemory is the client process's resident set at the same
	// points (Replica 0); nil where it could not be read. A checked run's
	// history goes to disk as it is recorded, so it stays flat too.
	ClientMemory *ReplicaMemory `json:"client_memory,omitempty"`
	// LeaderChanges counts the elections the replicas saw end during the
	// run; TermStart and TermEnd are the highest terms at the first and
	// the last scrape.
	LeaderChanges uint64 `json:"leader_changes"`
	TermStart     uint64 `json:"term_start"`
	TermEnd       uint64 `json:"term_end"`
	// Scrapes counts scrape rounds (one per second, every replica each);
	// ScrapeErrors the single scrapes that failed (a replica down or too
	// slow to answer).
	Scrapes      int `json:"scrapes"`
	ScrapeErrors int `json:"scrape_errors"`
	// Series holds the per-second series the intervals summarise, for
	// plots; the CSV written beside the report has every scraped value.
	Series *Series `json:"-"`
}

// Interval is one stretch of a run, [From, To) seconds after its start.
type Interval struct {
	FromSeconds float64 `json:"from_seconds"`
	ToSeconds   float64 `json:"to_seconds"`
	// Throughput is the clients' completions per second.
	Throughput float64 `json:"throughput"`
	// CPUMicrosPerOp is the replicas' CPU time, all together, per
	// operation the clients completed in the interval; zero when unknown.
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitempty"`
	// SyncMillis is the replicas' mean raft log save (write and fsync)
	// in the interval; zero when none synced.
	SyncMillis float64 `json:"sync_ms,omitempty"`
	// LoadNanos and StepNanos are the machine probe's CPU time per
	// dependent memory load and per arithmetic step in the interval (see
	// internal/probe): the machine's own speed, higher when it is slower;
	// zero when no probe ran.
	LoadNanos float64 `json:"probe_load_ns,omitempty"`
	StepNanos float64 `json:"probe_step_ns,omitempty"`
	// Lag has one entry per replica that followed during the interval.
	Lag []FollowerLag `json:"lag,omitempty"`
}

// FollowerLag summarises one follower's apply lag over an interval: the
// leader's commit index minus the follower's applied index, in log entries,
// at each scrape.
type FollowerLag struct {
	Replica uint64  `json:"replica"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// ReplicaMemory is one replica's resident set size at three points.
type ReplicaMemory struct {
	Replica uint64  `json:"replica"`
	StartMB float64 `json:"start_mb"`
	// Minute2MB is zero, and Minute2Known false, for a run shorter than
	// two minutes.
	Minute2MB    float64 `json:"minute2_mb"`
	Minute2Known bool    `json:"minute2_known"`
	EndMB        float64 `json:"end_mb"`
}

// Series is a run's per-second series, keyed by replica ID.
type Series struct {
	// Throughput is the clients' completions in each second of the run.
	Throughput []float64
	// Lag is each follower's apply lag at every scrape it followed in;
	// RSSMB each replica's resident set at every scrape it answered.
	Lag   map[uint64][]Point
	RSSMB map[uint64][]Point
	// ClientRSSMB is the client process's resident set at every scrape.
	ClientRSSMB []Point
	// MachineLoadNs is the machine probe's CPU time per dependent load
	// from memory in each of its samples; empty when no probe ran.
	MachineLoadNs []Point
}

// Point is one sample: Seconds after the run's start, and its value.
type Point struct {
	Seconds, Value float64
}

// writeOverTime prints the over-time section: a row per interval with the
// throughput, the replicas' CPU per operation and mean sync when scraped,
// and each follower's lag p99/max, then memory and elections.
func (r *Report) writeOverTime(b *strings.Builder) {
	o := r.OverTime
	if o == nil || o.Scrapes == 0 {
		return
	}
	fmt.Fprintf(b, "over time (per %g s, warm-up included; lag: leader's commit index minus the follower's applied index, entries)\n",
		o.IntervalSeconds)
	var followers []uint64
	for _, in := range o.Intervals {
		for _, l := range in.Lag {
			if !slices.Contains(followers, l.Replica) {
				followers = append(followers, l.Replica)
			}
		}
	}
	slices.Sort(followers)
	cpu := slices.ContainsFunc(o.Intervals, func(in Interval) bool { return in.CPUMicrosPerOp > 0 })
	sync := slices.ContainsFunc(o.Intervals, func(in Interval) bool { return in.SyncMillis > 0 })
	machine := slices.ContainsFunc(o.Intervals, func(in Interval) bool { return in.LoadNanos > 0 })
	tw := newTable(b)
	fmt.Fprintf(tw, "%-9s\tops/s\tvs first\t", "seconds")
	if cpu {
		fmt.Fprint(tw, "cpu µs/op\t")
	}
	if sync {
		fmt.Fprint(tw, "sync ms\t")
	}
	if machine {
		fmt.Fprint(tw, "load ns\tstep ns\t")
	}
	for _, id := range followers {
		fmt.Fprintf(tw, "r%d lag p99/max\t", id)
	}
	fmt.Fprintln(tw)
	for i, in := range o.Intervals {
		// How far each interval's throughput is from the first's: a run
		// that slows down shows it as a falling percentage.
		vs := "-"
		if first := o.Intervals[0].Throughput; i > 0 && first > 0 {
			vs = fmt.Sprintf("%+.1f%%", 100*(in.Throughput/first-1))
		}
		fmt.Fprintf(tw, "%-9s\t%.0f\t%s\t", fmt.Sprintf("%g-%g", in.FromSeconds, in.ToSeconds), in.Throughput, vs)
		if cpu {
			fmt.Fprintf(tw, "%s\t", orDash(in.CPUMicrosPerOp, "%.2f"))
		}
		if sync {
			fmt.Fprintf(tw, "%s\t", orDash(in.SyncMillis, "%.2f"))
		}
		if machine {
			fmt.Fprintf(tw, "%s\t%s\t", orDash(in.LoadNanos, "%.1f"), orDash(in.StepNanos, "%.3f"))
		}
		for _, id := range followers {
			cell := "-"
			for _, l := range in.Lag {
				if l.Replica == id {
					cell = fmt.Sprintf("%.0f/%.0f", l.P99, l.Max)
				}
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if machine {
		fmt.Fprintln(b, "load ns, step ns: the machine probe's CPU time per dependent load from memory and per arithmetic step, run beside the replicas at the lowest priority; higher is a slower machine")
	}
	parts := make([]string, len(o.Memory))
	for i, m := range o.Memory {
		parts[i] = fmt.Sprintf("r%d %s", m.Replica, m.threePoints())
	}
	if o.ClientMemory != nil {
		parts = append(parts, "clients "+o.ClientMemory.threePoints())
	}
	fmt.Fprintf(b, "rss MB (start / 2 min / end): %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(b, "leader changes: %d (term %d -> %d); %d scrape rounds, %d failed scrapes\n",
		o.LeaderChanges, o.TermStart, o.TermEnd, o.Scrapes, o.ScrapeErrors)
}

// orDash formats v, or a dash when it is zero (not measured).
func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// threePoints formats the resident set at the start, at two minutes and
// at the end.
func (m *ReplicaMemory) threePoints() string {
	min2 := "-"
	if m.Minute2Known {
		min2 = fmt.Sprintf("%.0f", m.Minute2MB)
	}
	return fmt.Sprintf("%.0f / %s / %.0f", m.StartMB, min2, m.EndMB)
}
