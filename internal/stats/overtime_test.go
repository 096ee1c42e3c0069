package stats

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func sampleOverTime() *OverTime {
	return &OverTime{
		IntervalSeconds: 10,
		Intervals: []Interval{
			{FromSeconds: 0, ToSeconds: 10, Throughput: 1234.4,
				Lag: []FollowerLag{{Replica: 3, P99: 40, Max: 41}, {Replica: 2, P99: 12, Max: 13}}},
			{FromSeconds: 10, ToSeconds: 15, Throughput: 99.6, Lag: []FollowerLag{{Replica: 1, P99: 0, Max: 0}}},
		},
		Memory: []ReplicaMemory{
			{Replica: 1, StartMB: 34, EndMB: 120.4},
			{Replica: 2, StartMB: 33, Minute2MB: 80, Minute2Known: true, EndMB: 500},
		},
		ClientMemory:  &ReplicaMemory{StartMB: 210, EndMB: 260.2},
		LeaderChanges: 1, TermStart: 2, TermEnd: 3, Scrapes: 15, ScrapeErrors: 2,
	}
}

func TestWriteOverTime(t *testing.T) {
	r := sampleReport()
	r.OverTime = sampleOverTime()
	var b bytes.Buffer
	require.NoError(t, r.WriteTable(&b))
	out := b.String()
	i := strings.Index(out, "over time")
	require.Positive(t, i, "the section follows the cpu line:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out[i:]), "\n")
	require.Equal(t, "over time (per 10 s, warm-up included; lag: leader's commit index minus the follower's applied index, entries)", lines[0])
	require.Regexp(t, `^  seconds\s+ops/s\s+vs first\s+r1 lag p99/max\s+r2 lag p99/max\s+r3 lag p99/max$`, lines[1],
		"a column per replica that followed at any time, in ID order")
	require.Regexp(t, `^  0-10\s+1234\s+-\s+-\s+12/13\s+40/41$`, lines[2])
	require.Regexp(t, `^  10-15\s+100\s+-91\.9%\s+0/0\s+-\s+-$`, lines[3])
	require.Equal(t, "rss MB (start / 2 min / end): r1 34 / - / 120, r2 33 / 80 / 500, clients 210 / - / 260", lines[4])
	require.Equal(t, "leader changes: 1 (term 2 -> 3); 15 scrape rounds, 2 failed scrapes", lines[5])
	require.True(t, strings.HasPrefix(lines[6], "note: "), "notes come last")

	var plain bytes.Buffer
	require.NoError(t, sampleReport().WriteTable(&plain))
	require.NotContains(t, plain.String(), "over time", "no section without scrapes")
}

func TestWriteOverTimeCosts(t *testing.T) {
	r := sampleReport()
	r.OverTime = sampleOverTime()
	r.OverTime.Intervals[0].CPUMicrosPerOp, r.OverTime.Intervals[0].SyncMillis = 12.345, 1.5
	var b bytes.Buffer
	require.NoError(t, r.WriteTable(&b))
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out[strings.Index(out, "over time"):]), "\n")
	require.Regexp(t, `^  seconds\s+ops/s\s+vs first\s+cpu µs/op\s+sync ms\s+r1 lag p99/max`, lines[1])
	require.Regexp(t, `^  0-10\s+1234\s+-\s+12\.35\s+1\.50\s+-\s+12/13\s+40/41$`, lines[2])
	require.Regexp(t, `^  10-15\s+100\s+-91\.9%\s+-\s+-\s+0/0\s+-\s+-$`, lines[3], "an interval without them shows dashes")
}

// TestWriteOverTimeMachine: intervals the machine probe measured get its
// two speeds and the section says what they are; without a probe neither
// the columns nor the legend appear (TestWriteOverTime).
func TestWriteOverTimeMachine(t *testing.T) {
	r := sampleReport()
	r.OverTime = sampleOverTime()
	r.OverTime.Intervals[0].LoadNanos, r.OverTime.Intervals[0].StepNanos = 243.21, 1.8234
	var b bytes.Buffer
	require.NoError(t, r.WriteTable(&b))
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out[strings.Index(out, "over time"):]), "\n")
	require.Regexp(t, `^  seconds\s+ops/s\s+vs first\s+load ns\s+step ns\s+r1 lag p99/max`, lines[1])
	require.Regexp(t, `^  0-10\s+1234\s+-\s+243\.2\s+1\.823\s+-\s+12/13\s+40/41$`, lines[2])
	require.Regexp(t, `^  10-15\s+100\s+-91\.9%\s+-\s+-\s+0/0\s+-\s+-$`, lines[3], "an interval the probe missed shows dashes")
	require.True(t, strings.HasPrefix(lines[4], "load ns, step ns: the machine probe's CPU time"), lines[4])
	require.True(t, strings.HasPrefix(lines[5], "rss MB"), lines[5])

	var plain bytes.Buffer
	r.OverTime = sampleOverTime()
	require.NoError(t, r.WriteTable(&plain))
	require.NotContains(t, plain.String(), "load ns")
}
