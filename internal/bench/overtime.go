package bench

import (
	"maps"
	"math"
	"slices"

	"github.com/hybridkv/hybridkv/internal/probe"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// The series the over-time summary reads (see internal/cluster/metrics.go).
const (
	seriesRSS           = "process_resident_memory_bytes"
	seriesIsLeader      = "hybridkv_raft_is_leader"
	seriesTerm          = "hybridkv_raft_term"
	seriesCommit        = "hybridkv_raft_commit_index"
	seriesApplied       = "hybridkv_raft_applied_index"
	seriesLeaderChanges = "hybridkv_raft_leader_changes_total"
	seriesCPU           = "process_cpu_seconds_total"
	seriesSyncSum       = "hybridkv_disk_fsync_duration_seconds_sum"
	seriesSyncCount     = "hybridkv_disk_fsync_duration_seconds_count"
)

// minute2 is the second at which a run's memory is reported mid-way: by
// then the state has grown from the start, and a leak shows against the
// end.
const minute2 = 120.0

// intervalFor is the over-time section's granularity: a row per minute,
// or per 10 s for runs of two minutes or less, so either has a few rows.
func intervalFor(seconds float64) float64 {
	if seconds > 120 {
		return 60
	}
	return 10
}

// summarizeOverTime turns the scrape rounds, the clients' per-second
// completions and the machine probe's samples (if it ran) into the
// report's over-time section; nil without rounds.
func summarizeOverTime(rounds []round, perSecond []float64, machine []probe.Sample) *stats.OverTime {
	if len(rounds) == 0 {
		return nil
	}
	total := max(float64(len(perSecond)), rounds[len(rounds)-1].Seconds)
	o := &stats.OverTime{
		IntervalSeconds: intervalFor(total),
		Scrapes:         len(rounds),
		Series: &stats.Series{
			Throughput: perSecond,
			Lag:        followerLags(rounds),
			RSSMB:      make(map[uint64][]stats.Point),
		},
	}
	for _, m := range machine {
		if load, _ := probe.Speeds([]probe.Sample{m}); load > 0 {
			o.Series.MachineLoadNs = append(o.Series.MachineLoadNs, stats.Point{Seconds: m.Seconds, Value: load})
		}
	}
	for _, rd := range rounds {
		o.ScrapeErrors += rd.Errors
		if rd.ClientRSS > 0 {
			o.Series.ClientRSSMB = append(o.Series.ClientRSSMB, stats.Point{Seconds: rd.Seconds, Value: rd.ClientRSS / (1 << 20)})
		}
		for id, vals := range rd.Values {
			if v, ok := vals[seriesRSS]; ok {
				o.Series.RSSMB[id] = append(o.Series.RSSMB[id], stats.Point{Seconds: rd.Seconds, Value: v / (1 << 20)})
			}
		}
	}
	for from := 0.0; from < total; from += o.IntervalSeconds {
		in := interval(from, min(from+o.IntervalSeconds, total), o.Series)
		in.CPUMicrosPerOp, in.SyncMillis = costs(rounds, in)
		in.LoadNanos, in.StepNanos = probe.Speeds(samplesIn(machine, in))
		o.Intervals = append(o.Intervals, in)
	}
	for _, id := range slices.Sorted(maps.Keys(o.Series.RSSMB)) {
		o.Memory = append(o.Memory, memoryOf(id, o.Series.RSSMB[id]))
	}
	if len(o.Series.ClientRSSMB) > 0 {
		m := memoryOf(0, o.Series.ClientRSSMB)
		o.ClientMemory = &m
	}
	o.LeaderChanges = leaderChanges(rounds)
	o.TermStart, o.TermEnd = highest(rounds, seriesTerm, true), highest(rounds, seriesTerm, false)
	return o
}

// samplesIn is the probe's samples that ended inside the interval.
func samplesIn(machine []probe.Sample, in stats.Interval) []probe.Sample {
	var inside []probe.Sample
	for _, s := range machine {
		if s.Seconds >= in.FromSeconds && s.Seconds < in.ToSeconds {
			inside = append(inside, s)
		}
	}
	return inside
}

// followerLags is, per replica, its apply lag at each round it followed
// in: the leader's commit index minus its applied index, never below zero
// (the replicas are scraped at once, yet not at one instant).
func followerLags(rounds []round) map[uint64][]stats.Point {
	lags := make(map[uint64][]stats.Point)
	for _, rd := range rounds {
		leader, ok := leaderOf(rd)
		if !ok {
			continue
		}
		commit := rd.Values[leader][seriesCommit]
		for id, vals := range rd.Values {
			applied, ok := vals[seriesApplied]
			if id == leader || !ok {
				continue
			}
			lags[id] = append(lags[id], stats.Point{Seconds: rd.Seconds, Value: max(commit-applied, 0)})
		}
	}
	return lags
}

// leaderOf is the replica that said it leads, in the highest term if a
// deposed leader has not heard yet.
func leaderOf(rd round) (uint64, bool) {
	var leader uint64
	term, found := -1.0, false
	for id, vals := range rd.Values {
		if vals[seriesIsLeader] == 1 && vals[seriesTerm] > term {
			leader, term, found = id, vals[seriesTerm], true
		}
	}
	return leader, found
}

// interval summarises [from, to) seconds of the timeline.
func interval(from, to float64, tl *stats.Series) stats.Interval {
	in := stats.Interval{FromSeconds: from, ToSeconds: to}
	lo, hi := int(from), min(int(math.Ceil(to)), len(tl.Throughput))
	if lo < hi {
		sum := 0.0
		for _, n := range tl.Throughput[lo:hi] {
			sum += n
		}
		in.Throughput = sum / float64(hi-lo)
	}
	for _, id := range slices.Sorted(maps.Keys(tl.Lag)) {
		var vs []float64
		for _, p := range tl.Lag[id] {
			if p.Seconds >= from && p.Seconds < to {
				vs = append(vs, p.Value)
			}
		}
		if len(vs) > 0 {
			slices.Sort(vs)
			in.Lag = append(in.Lag, stats.FollowerLag{Replica: id, P99: percentile(vs, 99), Max: vs[len(vs)-1]})
		}
	}
	return in
}

// costs is what the replicas spent in an interval, from their counters:
// CPU time per completed operation (µs) and mean raft log sync (ms), each
// zero when unknown.
func costs(rounds []round, in stats.Interval) (cpuMicrosPerOp, syncMillis float64) {
	var cores, syncSum, syncCount float64
	for _, id := range replicaIDs(rounds) {
		if d, span, ok := growth(rounds, id, seriesCPU, in); ok && span > 0 {
			cores += d / span
		}
		sum, _, okSum := growth(rounds, id, seriesSyncSum, in)
		count, _, okCount := growth(rounds, id, seriesSyncCount, in)
		if okSum && okCount {
			syncSum, syncCount = syncSum+sum, syncCount+count
		}
	}
	if in.Throughput > 0 {
		cpuMicrosPerOp = cores / in.Throughput * 1e6
	}
	if syncCount > 0 {
		syncMillis = syncSum / syncCount * 1e3
	}
	return cpuMicrosPerOp, syncMillis
}

// growth is how far a replica's counter rose over its scrapes inside the
// interval, and over how many seconds: the sum of the rises from one
// scrape to the next, leaving out a step where the counter went back (the
// replica restarted and its counters began again). Not ok without such a
// step.
func growth(rounds []round, id uint64, series string, in stats.Interval) (delta, span float64, ok bool) {
	var prev *round
	for i := range rounds {
		rd := &rounds[i]
		if rd.Seconds < in.FromSeconds || rd.Seconds >= in.ToSeconds {
			continue
		}
		v, has := rd.Values[id][series]
		if !has {
			continue
		}
		if prev != nil {
			if d := v - prev.Values[id][series]; d >= 0 {
				delta, span, ok = delta+d, span+rd.Seconds-prev.Seconds, true
			}
		}
		prev = rd
	}
	return delta, span, ok
}

// replicaIDs is every replica any round has values of, in order.
func replicaIDs(rounds []round) []uint64 {
	seen := make(map[uint64]bool)
	for _, rd := range rounds {
		for id := range rd.Values {
			seen[id] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// memoryOf picks a replica's resident set at its first sample, at the one
// nearest two minutes (within five seconds), and at its last.
func memoryOf(id uint64, rss []stats.Point) stats.ReplicaMemory {
	m := stats.ReplicaMemory{Replica: id, StartMB: rss[0].Value, EndMB: rss[len(rss)-1].Value}
	best := 5.0
	for _, p := range rss {
		if d := math.Abs(p.Seconds - minute2); d <= best {
			best, m.Minute2MB, m.Minute2Known = d, p.Value, true
		}
	}
	return m
}

// leaderChanges is the most leader changes any one replica saw during the
// run: its counter's increments between rounds, except the first leader it
// learned of (the cluster's first election, or the current leader when a
// replica restarts: its counter starts again from zero).
func leaderChanges(rounds []round) uint64 {
	seen := make(map[uint64]uint64)
	last := make(map[uint64]float64)
	for _, rd := range rounds {
		for id, vals := range rd.Values {
			v, ok := vals[seriesLeaderChanges]
			if !ok {
				continue
			}
			if prev, ok := last[id]; ok && v > max(prev, 1) {
				seen[id] += uint64(v - max(prev, 1))
			}
			last[id] = v
		}
	}
	var most uint64
	for _, n := range seen {
		most = max(most, n)
	}
	return most
}

// highest is the largest value of a series across replicas in the first
// (or last) round that has it.
func highest(rounds []round, series string, first bool) uint64 {
	for i := range rounds {
		rd := rounds[i]
		if !first {
			rd = rounds[len(rounds)-1-i]
		}
		found, top := false, 0.0
		for _, vals := range rd.Values {
			if v, ok := vals[series]; ok {
				found, top = true, max(top, v)
			}
		}
		if found {
			return uint64(top)
		}
	}
	return 0
}
