package checker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// logOfEvents logs the events' operations in the order given.
func logOfEvents(events ...history.Event) [][]byte {
	var log [][]byte
	for _, e := range events {
		log = append(log, wire.Append(nil, &wire.Request{Op: wire.Op{ID: e.ID(), Level: e.Level, Kind: e.Kind, Key: e.Key, Value: e.Value}}))
	}
	return log
}

// TestLogOrderCatchesAHiddenInversion: session 1's strong put a returns
// before session 2's weak put w is invoked, and a third put hides both
// from every read. Logged w before a, the replicas passed through a state
// no linearization allows, which only the log shows.
func TestLogOrderCatchesAHiddenInversion(t *testing.T) {
	events := numbered(
		put(S, 1, x, "a", 0, 10),
		put(W, 2, x, "w", 20, 30),
		put(S, 1, x, "c", 40, 50),
		get(S, 3, x, "c", 60, 70),
	)
	a, w, c := events[0], events[1], events[2]

	res := Check(&history.File{Events: events}, Options{})
	require.True(t, res.Clean(), "without the log the values show nothing: %v", res.Violations)

	res = Check(&history.File{Events: events, Log: logOfEvents(a, w, c)}, Options{})
	require.True(t, res.Clean(), "%v", res.Violations)

	res = Check(&history.File{Events: events, Log: logOfEvents(w, a, c)}, Options{})
	require.Equal(t, []string{"S1"}, properties(res))
	require.Contains(t, res.Violations[0].Detail, "LogOrder")
}

// TestLogOrderLeavesConcurrentAndOtherKeysAlone: puts whose spans
// overlap, puts on different keys, and a weak put that nothing causally
// later bounds may be logged in any order.
func TestLogOrderLeavesConcurrentAndOtherKeysAlone(t *testing.T) {
	events := numbered(
		put(S, 1, x, "a", 0, 30),
		put(S, 2, x, "b", 10, 40),
		put(S, 1, y, "c", 50, 60),
		put(W, 3, x, "d", 0, 5),
		put(S, 2, y, "e", 70, 80),
	)
	a, b, c, d, e := events[0], events[1], events[2], events[3], events[4]
	res := Check(&history.File{Events: events, Log: logOfEvents(b, a, e, c, d)}, Options{})
	require.Equal(t, []string{"S1"}, properties(res), "c returned before e was invoked, on the same key")

	res = Check(&history.File{Events: events, Log: logOfEvents(b, c, a, e, d)}, Options{})
	require.True(t, res.Clean(), "%v", res.Violations)
}
