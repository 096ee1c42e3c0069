package checker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

const (
	S = wire.Strong
	W = wire.Weak
)

// Keys used by the hand-built histories.
const (
	x = "x"
	y = "y"
)

func put(l wire.Level, sess uint64, key, v string, inv, ret int64) history.Event {
	return history.Event{Session: sess, Level: l, Kind: wire.Put, Key: key, Value: []byte(v),
		Invoke: inv, Return: ret, Outcome: history.OK}
}

// get builds a read; v == "" means it found nothing.
func get(l wire.Level, sess uint64, key, v string, inv, ret int64) history.Event {
	e := history.Event{Session: sess, Level: l, Kind: wire.Get, Key: key,
		Invoke: inv, Return: ret, Outcome: history.OK}
	if v != "" {
		e.Value, e.Found = []byte(v), true
	}
	return e
}

func slot(e history.Event, s uint64) history.Event { e.Slot = s; return e }

func unknown(e history.Event) history.Event {
	e.Outcome, e.Return = history.Unknown, 0
	return e
}

// numbered gives each session's events sequence numbers in the order listed.
func numbered(events ...history.Event) []history.Event {
	seq := map[uint64]uint64{}
	for i := range events {
		seq[events[i].Session]++
		events[i].Seq = seq[events[i].Session]
	}
	return events
}

func properties(r Result) []string {
	var ps []string
	for _, v := range r.Violations {
		if !slices.Contains(ps, v.Property) {
			ps = append(ps, v.Property)
		}
	}
	for p := range r.Omitted {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

func TestProperties(t *testing.T) {
	tests := []struct {
		name     string
		events   []history.Event
		replicas []history.ReplicaState
		opts     Options
		want     []string // properties violated; nil for a clean history
		pattern  string   // expected in some violation's detail
	}{
		{name: "S1 ok: strong read after strong put",
			events: numbered(put(S, 1, x, "a", 0, 10), get(S, 2, x, "a", 20, 30))},
		{name: "S1 ok: weak put not yet visible to a strong read",
			events: numbered(put(W, 1, x, "a", 0, 5), get(S, 2, x, "", 10, 20), get(S, 2, x, "a", 30, 40))},
		{name: "S1 ok: put of unknown outcome takes effect late",
			events: numbered(unknown(put(S, 1, x, "a", 0, 0)), get(S, 2, x, "", 50, 60), get(S, 3, x, "a", 100, 110))},
		{name: "S1: two readers see concurrent puts in opposite orders",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 2, x, "b", 0, 10),
				get(S, 3, x, "a", 20, 30), get(S, 3, x, "b", 40, 50),
				get(S, 4, x, "b", 20, 30), get(S, 4, x, "a", 40, 50)),
			want: []string{"S1"}},
		{name: "S1 and W5: stale strong read",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "b", 20, 30), get(S, 2, x, "a", 40, 50)),
			want:   []string{"S1", "W5"}, pattern: "WriteCORead"},

		{name: "W1 ok: read own write",
			events: numbered(put(W, 1, x, "a", 0, 10), get(W, 1, x, "a", 20, 30))},
		{name: "W1 ok: concurrent read may miss the write",
			events: numbered(put(W, 1, x, "a", 0, 10), get(W, 1, x, "", 5, 30))},
		{name: "W1: own write missing",
			events: numbered(put(W, 1, x, "a", 0, 10), get(W, 1, x, "", 20, 30)),
			want:   []string{"W1"}, pattern: "WriteCOInitRead"},
		{name: "W1: older value than own write in the log",
			events: numbered(slot(put(W, 2, x, "a", 0, 5), 1), slot(put(W, 1, x, "b", 10, 20), 2), get(W, 1, x, "a", 30, 40)),
			want:   []string{"W1"}, pattern: "StaleLogRead"},

		{name: "W2 ok: reads move forward",
			events: numbered(slot(put(W, 1, x, "a", 0, 5), 1), slot(put(W, 2, x, "b", 10, 15), 2),
				get(W, 3, x, "a", 20, 25), get(W, 3, x, "b", 30, 35))},
		{name: "W2: older value after newer",
			events: numbered(slot(put(W, 1, x, "a", 0, 5), 1), slot(put(W, 2, x, "b", 10, 15), 2),
				get(W, 3, x, "b", 20, 25), get(W, 3, x, "a", 30, 35)),
			want: []string{"W2"}, pattern: "StaleLogRead"},

		{name: "W3: session's writes seen out of order",
			events: numbered(put(W, 1, x, "a", 0, 5), put(W, 1, x, "b", 10, 15),
				get(W, 2, x, "b", 20, 25), get(W, 2, x, "a", 30, 35)),
			want: []string{"W3"}, pattern: "WriteCORead"},
		{name: "W3: log reverses a session's writes",
			events: numbered(slot(put(W, 1, x, "a", 0, 5), 2), slot(put(W, 1, x, "b", 10, 15), 1)),
			want:   []string{"W3"}, pattern: "CyclicCF"},

		{name: "W4 ok: the read-from write is seen",
			events: numbered(put(W, 1, x, "a", 0, 5), get(W, 2, x, "a", 10, 15), put(W, 2, x, "b", 20, 25),
				put(W, 2, y, "c", 30, 35), get(W, 3, y, "c", 40, 45), get(W, 3, x, "b", 50, 55))},
		{name: "W4: write-follows-read broken",
			events: numbered(put(W, 1, x, "a", 0, 5), get(W, 2, x, "a", 10, 15), put(W, 2, x, "b", 20, 25),
				put(W, 2, y, "c", 30, 35), get(W, 3, y, "c", 40, 45), get(W, 3, x, "a", 50, 55)),
			want: []string{"W4"}, pattern: "WriteCORead"},
		{name: "W4: log puts a write before one it follows",
			events: numbered(slot(put(W, 1, x, "a", 0, 5), 2), get(W, 2, x, "a", 10, 15), slot(put(W, 2, x, "b", 20, 25), 1)),
			want:   []string{"W4"}, pattern: "CyclicCF"},

		{name: "W5: initial value although a write is in the causal past",
			events: numbered(put(W, 1, x, "a", 0, 5), get(W, 2, x, "a", 10, 15), put(W, 2, y, "b", 20, 25),
				get(W, 3, y, "b", 30, 35), get(W, 3, x, "", 40, 45)),
			want: []string{"W5"}, pattern: "WriteCOInitRead"},
		{name: "W5: causal order has a cycle",
			events: numbered(get(W, 1, y, "b", 0, 10), put(W, 1, x, "a", 20, 30),
				get(W, 2, x, "a", 0, 10), put(W, 2, y, "b", 20, 30)),
			want: []string{"W5"}, pattern: "CyclicCO"},

		{name: "W6: thin-air value",
			events: numbered(put(W, 1, x, "a", 0, 5), get(W, 2, x, "zz", 10, 20)),
			want:   []string{"W6"}, pattern: "ThinAirRead"},
		{name: "W6: value read before it was written",
			events: numbered(get(W, 1, x, "a", 0, 10), put(W, 2, x, "a", 20, 30)),
			want:   []string{"W6"}, pattern: "FutureRead"},

		{name: "C1 ok: strong read returns own weak write",
			events: numbered(put(W, 1, x, "a", 0, 10), get(S, 1, x, "a", 20, 30))},
		{name: "C1: strong read misses own weak write",
			events: numbered(put(W, 1, x, "a", 0, 10), get(S, 1, x, "", 20, 30)),
			want:   []string{"C1"}},

		{name: "C2 ok: observer of the strong op sees the weak write",
			events: numbered(put(W, 1, x, "a", 0, 5), put(S, 1, y, "b", 10, 20), get(S, 2, y, "b", 30, 40), get(W, 2, x, "a", 50, 60))},
		{name: "C2: observer of the strong op misses the weak write",
			events: numbered(put(W, 1, x, "a", 0, 5), put(S, 1, y, "b", 10, 20), get(S, 2, y, "b", 30, 40), get(W, 2, x, "", 50, 60)),
			want:   []string{"C2"}},

		{name: "C3 ok: weak read from a state that applied the write",
			events: numbered(slot(put(W, 1, x, "a", 0, 5), 7), slot(get(W, 2, x, "a", 10, 15), 7))},
		{name: "C3: weak read from a state before the write",
			events: numbered(slot(put(W, 1, x, "a", 0, 5), 7), slot(get(W, 2, x, "a", 10, 15), 5)),
			want:   []string{"C3"}},
		{name: "C3: strong read sees an unlogged weak write",
			events: numbered(slot(put(W, 1, x, "a", 0, 5), 7), slot(get(S, 2, x, "a", 10, 15), 5)),
			want:   []string{"C3"}},
		{name: "C3 ok: CURP-HO strong read may see it early",
			events: numbered(slot(put(W, 1, x, "a", 0, 5), 7), slot(get(S, 2, x, "a", 10, 15), 5)),
			opts:   Options{Claims: guarantees.Claims{EarlyStrongVisibility: true}}},

		{name: "E1 ok: equal digests at equal indexes",
			replicas: []history.ReplicaState{{ID: 1, Applied: 10, Digest: 5}, {ID: 2, Applied: 10, Digest: 5}, {ID: 3, Applied: 9, Digest: 6}}},
		{name: "E1: digests differ at one index",
			replicas: []history.ReplicaState{{ID: 1, Applied: 10, Digest: 5}, {ID: 2, Applied: 10, Digest: 6}},
			want:     []string{"E1"}},

		{name: "X1 ok: duplicate record, same result",
			events: []history.Event{put(W, 1, x, "a", 0, 5), put(W, 1, x, "a", 0, 5)}},
		{name: "X1: one identity, two results",
			events: []history.Event{put(W, 1, x, "a", 0, 5), get(W, 2, x, "a", 10, 15), get(W, 2, x, "", 10, 15)},
			want:   []string{"X1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(&history.File{Events: tc.events, Replicas: tc.replicas}, tc.opts)
			for _, v := range r.Violations {
				t.Log(v)
			}
			require.NoError(t, r.Err)
			assert.Equal(t, tc.want, properties(r), "%v", r.Violations)
			assert.Equal(t, tc.want == nil, r.Clean())
			if tc.pattern != "" {
				assert.True(t, slices.ContainsFunc(r.Violations, func(v Violation) bool {
					return strings.Contains(v.Detail, tc.pattern)
				}), "no %s in %v", tc.pattern, r.Violations)
			}
		})
	}
}

func TestDuplicateValueIsUncheckable(t *testing.T) {
	r := Check(&history.File{Events: numbered(put(W, 1, x, "a", 0, 5), put(S, 2, x, "a", 10, 15))}, Options{})
	assert.ErrorContains(t, r.Err, "both write")
	assert.False(t, r.Clean())
	// The same value on different keys is fine.
	r = Check(&history.File{Events: numbered(put(W, 1, x, "a", 0, 5), put(S, 2, y, "a", 10, 15))}, Options{})
	assert.NoError(t, r.Err)
}

func TestInvalidEventIsUncheckable(t *testing.T) {
	r := Check(&history.File{Events: []history.Event{get(S, 1, x, "", 10, 5)}}, Options{})
	assert.Error(t, r.Err)
}

func TestFailedOperations(t *testing.T) {
	failed := put(S, 1, x, "a", 0, 0)
	failed.Outcome = history.Failed
	lost := get(S, 2, x, "zz", 0, 0)
	lost.Outcome = history.Failed
	// A failed put may have happened; a failed get observed nothing.
	r := Check(&history.File{Events: numbered(failed, lost, get(S, 3, x, "a", 20, 30))}, Options{})
	assert.True(t, r.Clean(), "%v", r.Violations)
}

func TestViolationString(t *testing.T) {
	r := Check(&history.File{Events: numbered(put(W, 1, x, "a", 0, 10), get(W, 1, x, "", 20, 30))}, Options{})
	require.Len(t, r.Violations, 1)
	s := r.Violations[0].String()
	for _, want := range []string{"W1 read-your-writes", `1.1 weak put key "x"`, `1.2 weak get key "x" -> not found`, "[20ns, 30ns]"} {
		assert.Contains(t, s, want)
	}
	r = Check(&history.File{Events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "b", 20, 30), get(S, 2, x, "a", 40, 50))}, Options{})
	i := slices.IndexFunc(r.Violations, func(v Violation) bool { return v.Property == "S1" })
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, r.Violations[i].String(), `2.1 strong get key "x" -> value of 1.1`)
}

func TestVisualization(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.html")
	events := numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "b", 20, 30), get(S, 2, x, "a", 40, 50))
	r := Check(&history.File{Events: events}, Options{VisualizePath: path})
	require.Contains(t, properties(r), "S1")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Positive(t, info.Size())
}

func TestMaxPerProperty(t *testing.T) {
	var events []history.Event
	for i := range 5 {
		events = append(events, get(W, uint64(i+1), x, "zz"+string(rune('a'+i)), 0, 5))
	}
	r := Check(&history.File{Events: numbered(events...)}, Options{MaxPerProperty: 2})
	assert.Len(t, r.Violations, 2)
	assert.Equal(t, 3, r.Omitted["W6"])
	assert.False(t, r.Clean())
}
