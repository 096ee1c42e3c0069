package stats

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSummarizeFaults(t *testing.T) {
	faults := []Fault{
		{Kind: "kill", UnavailableMs: map[string]float64{"a": 100, "b": 300}, Failed: 2},
		{Kind: "pause", UnavailableMs: map[string]float64{"a": 50}},
		{Kind: "kill", UnavailableMs: map[string]float64{"a": 200, "b": 900}, Failed: 1},
	}
	got := SummarizeFaults(faults, []string{"a", "b"})
	require.Len(t, got, 2)
	require.Equal(t, FaultKindSummary{Kind: "kill", Faults: 2, Samples: 4, MedianMs: 250, MaxMs: 900, Failed: 3}, got[0])
	require.Equal(t, "pause", got[1].Kind)
	require.Equal(t, 1, got[1].Never)
	require.Equal(t, 50.0, got[1].MedianMs)

	none := SummarizeFaults([]Fault{{Kind: "link"}}, []string{"a"})
	require.True(t, math.IsNaN(none[0].MedianMs))

	var b strings.Builder
	(&Report{Faults: faults, FaultSites: []string{"a", "b"}}).writeFaults(&b)
	out := b.String()
	require.Contains(t, out, "b never")
	require.Regexp(t, `kill\s+2\s+250 ms\s+900 ms\s+0\s+3`, out)
}
