package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/probe"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// replicaValues builds one replica's scraped values.
func replicaValues(leader bool, term, commit, applied, changes, rssMB float64) map[string]float64 {
	isLeader := 0.0
	if leader {
		isLeader = 1
	}
	return map[string]float64{
		seriesIsLeader: isLeader, seriesTerm: term, seriesCommit: commit, seriesApplied: applied,
		seriesLeaderChanges: changes, seriesRSS: rssMB * (1 << 20),
	}
}

// TestSummarizeOverTime: 25 rounds over a 25 s run; replica 1 leads until
// replica 2 takes over at 20 s, replica 3 falls further behind every second
// and is not answering at 5 s.
func TestSummarizeOverTime(t *testing.T) {
	var rounds []round
	perSecond := make([]float64, 25)
	for s := range 25 {
		sec := float64(s)
		perSecond[s] = 100 * sec
		commit := 1000 + 10*sec
		l1, l2, changes, term := true, false, 1.0, 2.0
		if s >= 20 {
			l1, l2, changes, term = false, true, 2, 3
		}
		rd := round{Seconds: sec + 0.1, Values: map[uint64]map[string]float64{
			1: replicaValues(l1, term, commit, commit, changes, 30),
			2: replicaValues(l2, term, commit, commit-1, changes, 30+sec),
		}, ClientRSS: (200 + 2*sec) * (1 << 20)}
		if s == 5 {
			rd.Errors = 1
		} else {
			// A replica applied ahead of the leader's commit when scraped
			// (scrapes are not simultaneous) counts as no lag.
			rd.Values[3] = replicaValues(false, term, commit, commit-sec+1, 0, 40)
		}
		rounds = append(rounds, rd)
	}
	o := summarizeOverTime(rounds, perSecond, nil)
	require.Equal(t, 10.0, o.IntervalSeconds)
	require.Equal(t, 25, o.Scrapes)
	require.Equal(t, 1, o.ScrapeErrors)
	require.Len(t, o.Intervals, 3)

	first := o.Intervals[0]
	require.Equal(t, 0.0, first.FromSeconds)
	require.Equal(t, 10.0, first.ToSeconds)
	require.Equal(t, 450.0, first.Throughput, "mean of 0, 100, ... 900")
	require.Equal(t, []stats.FollowerLag{{Replica: 2, P99: 1, Max: 1}, {Replica: 3, P99: 8, Max: 8}}, first.Lag)

	last := o.Intervals[2]
	require.Equal(t, 20.0, last.FromSeconds)
	require.Equal(t, 25.0, last.ToSeconds)
	require.Equal(t, 2200.0, last.Throughput)
	// Replica 2 leads now: replica 1 follows, with nothing to apply.
	require.Equal(t, []stats.FollowerLag{{Replica: 1, P99: 0, Max: 0}, {Replica: 3, P99: 23, Max: 23}}, last.Lag)

	require.Equal(t, []stats.ReplicaMemory{
		{Replica: 1, StartMB: 30, EndMB: 30},
		{Replica: 2, StartMB: 30, EndMB: 54},
		{Replica: 3, StartMB: 40, EndMB: 40},
	}, o.Memory, "a 25 s run has no memory at two minutes")
	require.Equal(t, &stats.ReplicaMemory{StartMB: 200, EndMB: 248}, o.ClientMemory)
	require.Equal(t, uint64(1), o.LeaderChanges, "the first leader learned is not a change")
	require.Equal(t, uint64(2), o.TermStart)
	require.Equal(t, uint64(3), o.TermEnd)
	require.Len(t, o.Series.Lag[3], 24)
	require.Len(t, o.Series.RSSMB[2], 25)
}

func TestSummarizeOverTimeLongRun(t *testing.T) {
	var rounds []round
	for s := 0; s < 300; s += 2 {
		rounds = append(rounds, round{Seconds: float64(s), Values: map[uint64]map[string]float64{
			1: replicaValues(true, 2, 10, 10, 1, float64(s)),
		}})
	}
	o := summarizeOverTime(rounds, make([]float64, 301), nil)
	require.Equal(t, 60.0, o.IntervalSeconds, "a row per minute past two minutes")
	require.Len(t, o.Intervals, 6)
	require.Equal(t, []stats.ReplicaMemory{{Replica: 1, StartMB: 0, Minute2MB: 120, Minute2Known: true, EndMB: 298}}, o.Memory)
	require.Nil(t, summarizeOverTime(nil, nil, nil))
}

// TestOverTimeCosts: two replicas scraped every second for 20 s while the
// clients complete 1,000 operations a second; replica 1 uses half a core
// and syncs in 1 ms, replica 2 a whole core and syncs in 3 ms, and
// replica 2 restarts at 15 s, its counters starting again from near zero.
func TestOverTimeCosts(t *testing.T) {
	var rounds []round
	perSecond := make([]float64, 20)
	for s := range 20 {
		sec := float64(s)
		perSecond[s] = 1000
		since := sec // replica 2's seconds since it (re)started
		if s >= 15 {
			since = sec - 15 + 0.2
		}
		rounds = append(rounds, round{Seconds: sec, Values: map[uint64]map[string]float64{
			1: {seriesCPU: 0.5 * sec, seriesSyncSum: 0.1 * sec, seriesSyncCount: 100 * sec},
			2: {seriesCPU: 1.0 * since, seriesSyncSum: 0.3 * since, seriesSyncCount: 100 * since},
		}})
	}
	o := summarizeOverTime(rounds, perSecond, nil)
	require.Len(t, o.Intervals, 2)
	for _, in := range o.Intervals {
		require.InDelta(t, 1500, in.CPUMicrosPerOp, 1e-6, "1.5 cores over 1,000 ops/s, from %g s: the restart's step is left out", in.FromSeconds)
	}
	require.InDelta(t, 2, o.Intervals[0].SyncMillis, 1e-9, "as many syncs of 1 ms as of 3 ms")
	require.InDelta(t, (9*0.1+8*0.3)/(9*100+8*100)*1e3, o.Intervals[1].SyncMillis, 1e-9,
		"nine steps of replica 1, eight of replica 2 (the restart's left out)")

	// A replica that never syncs (fsync off) and a run without clients'
	// completions leave the costs unknown.
	quiet := []round{
		{Seconds: 0, Values: map[uint64]map[string]float64{1: {seriesCPU: 1, seriesSyncCount: 0, seriesSyncSum: 0}}},
		{Seconds: 1, Values: map[uint64]map[string]float64{1: {seriesCPU: 2, seriesSyncCount: 0, seriesSyncSum: 0}}},
	}
	o = summarizeOverTime(quiet, []float64{0, 0}, nil)
	require.Zero(t, o.Intervals[0].CPUMicrosPerOp)
	require.Zero(t, o.Intervals[0].SyncMillis)
}

// TestOverTimeMachineProbe: each interval gets the probe's speeds from the
// samples that ended inside it, weighted by the work each sample did, not
// averaged per sample; an interval with no sample has none.
func TestOverTimeMachineProbe(t *testing.T) {
	var rounds []round
	for s := range 30 {
		rounds = append(rounds, round{Seconds: float64(s), Values: map[uint64]map[string]float64{1: {seriesCPU: float64(s)}}})
	}
	machine := []probe.Sample{
		{Seconds: 1.2, Loads: 1000, LoadCPU: 200 * time.Microsecond, Steps: 10000, StepsCPU: 20 * time.Microsecond},
		{Seconds: 9.9, Loads: 3000, LoadCPU: 1200 * time.Microsecond, Steps: 10000, StepsCPU: 40 * time.Microsecond},
		{Seconds: 10, Loads: 1000, LoadCPU: 100 * time.Microsecond, Steps: 1000, StepsCPU: 2 * time.Microsecond},
	}
	o := summarizeOverTime(rounds, make([]float64, 30), machine)
	require.Len(t, o.Intervals, 3)
	require.InDelta(t, 350, o.Intervals[0].LoadNanos, 1e-9, "1.4 ms over 4,000 loads")
	require.InDelta(t, 3, o.Intervals[0].StepNanos, 1e-9, "60 µs over 20,000 steps")
	require.InDelta(t, 100, o.Intervals[1].LoadNanos, 1e-9, "a sample ending at 10 s belongs to [10, 20)")
	require.InDelta(t, 2, o.Intervals[1].StepNanos, 1e-9)
	require.Zero(t, o.Intervals[2].LoadNanos)
	require.Zero(t, o.Intervals[2].StepNanos)
	require.Equal(t, []stats.Point{{Seconds: 1.2, Value: 200}, {Seconds: 9.9, Value: 400}, {Seconds: 10, Value: 100}},
		o.Series.MachineLoadNs, "the plot's series: each sample's own ns per load")
}
