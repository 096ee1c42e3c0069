package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/checker"
	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// The verdict's line names what was checked and what the protocol does
// not claim.
func TestVerdictSummaryNamesTheClaims(t *testing.T) {
	f := &history.File{Events: []history.Event{
		{Session: 1, Seq: 1, Level: wire.Weak, Kind: wire.Put, Key: "x", Value: []byte("a"), Invoke: 0, Return: 10, Outcome: history.OK},
		{Session: 1, Seq: 2, Level: wire.Weak, Kind: wire.Get, Key: "x", Invoke: 20, Return: 30, Outcome: history.OK},
	}}
	cache := guarantees.S1 | guarantees.W1 | guarantees.W2 | guarantees.W6 | guarantees.C1 | guarantees.C3 | guarantees.E1 | guarantees.X1

	v := &Verdict{HistoryPath: "r/p.history", Events: 2,
		Result: checker.Check(&history.File{}, checker.Options{Claims: guarantees.Claims{Set: cache}})}
	s := v.Summary()
	assert.NotContains(t, s, "\n")
	assert.Contains(t, s, "check: clean — 2 operations; checked S1,W1,W2,W6,C1,C3,E1,X1; not claimed: W3,W4,W5,C2,D1;")

	v.Result = checker.Check(&history.File{}, checker.Options{Claims: guarantees.Claims{Set: guarantees.All}})
	assert.Contains(t, v.Summary(), "checked S1,W1,W2,W3,W4,W5,W6,C1,C2,C3,E1,X1; not claimed: none; claimed, not checked: D1;")

	// The read misses its session's put: W1, whatever else is claimed.
	v.Result = checker.Check(f, checker.Options{Claims: guarantees.Claims{Set: cache}})
	require.False(t, v.Clean())
	s = v.Summary()
	assert.True(t, strings.HasPrefix(s, "check: 1 VIOLATIONS in 2 operations (checked S1,W1,W2,W6,C1,C3,E1,X1; not claimed: W3,W4,W5,C2,D1); first: W1"), s)
	assert.NotContains(t, s, "\n")
}
