package checker

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

func del(l wire.Level, sess uint64, key string, inv, ret int64) history.Event {
	return history.Event{Session: sess, Level: l, Kind: wire.Delete, Key: key,
		Invoke: inv, Return: ret, Outcome: history.OK}
}

// TestDeletes: a delete is a write of "absent". A read that finds nothing
// may be explained by one; a read that returns the value a delete removed,
// once the delete is known to have taken effect, is caught.
func TestDeletes(t *testing.T) {
	tests := []struct {
		name    string
		events  []history.Event
		want    []string
		pattern string
	}{
		{name: "ok: strong read finds nothing after a delete",
			events: numbered(put(S, 1, x, "a", 0, 10), del(S, 1, x, 20, 30), get(S, 2, x, "", 40, 50))},
		{name: "ok: weak read finds nothing after its session's delete",
			events: numbered(put(W, 1, x, "a", 0, 10), del(W, 1, x, 20, 30), get(W, 1, x, "", 40, 50))},
		{name: "ok: a read concurrent with a delete returns the value",
			events: numbered(put(S, 1, x, "a", 0, 10), del(S, 1, x, 20, 50), get(S, 2, x, "a", 30, 40))},
		{name: "ok: a value written after a delete",
			events: numbered(del(S, 1, x, 0, 10), put(S, 1, x, "a", 20, 30), get(S, 2, x, "a", 40, 50),
				del(S, 2, x, 60, 70), get(S, 3, x, "", 80, 90))},
		{name: "ok: several deletes, reads finding nothing between puts",
			events: numbered(put(S, 1, x, "a", 0, 10), del(S, 1, x, 20, 30), get(S, 2, x, "", 40, 50),
				put(S, 1, x, "b", 60, 70), get(S, 2, x, "b", 80, 90), del(S, 1, x, 100, 110), get(S, 2, x, "", 120, 130))},

		{name: "S1: strong read returns the value a delete removed",
			events: numbered(put(S, 1, x, "a", 0, 10), del(S, 1, x, 20, 30), get(S, 2, x, "a", 40, 50)),
			want:   []string{"S1", "W5"}, pattern: "WriteCORead"},
		{name: "W1: weak read returns the value its session deleted",
			events: numbered(put(W, 1, x, "a", 0, 10), del(W, 1, x, 20, 30), get(W, 1, x, "a", 40, 50)),
			want:   []string{"W1"}, pattern: "although delete 1.2"},
		{name: "W1: in the log, the delete came after the value read",
			events: numbered(slot(put(W, 2, x, "a", 0, 5), 1), slot(del(W, 1, x, 10, 20), 2), get(W, 1, x, "a", 30, 40)),
			want:   []string{"W1"}, pattern: "StaleLogRead"},
		{name: "S1: finds nothing after a put no delete can follow",
			events: numbered(del(S, 1, x, 0, 10), put(S, 1, x, "a", 20, 30), get(S, 2, x, "", 40, 50)),
			want:   []string{"S1", "W5"}, pattern: "no delete of the key can take effect between them"},
		{name: "W1: finds nothing although its put came after its delete",
			events: numbered(del(W, 1, x, 0, 10), put(W, 1, x, "a", 20, 30), get(W, 1, x, "", 40, 50)),
			want:   []string{"W1"}, pattern: "which no delete explains"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(&history.File{Events: tc.events}, Options{CrossCheck: true})
			require.NoError(t, r.Err)
			require.Equal(t, tc.want, properties(r), "%v", r.Violations)
			if tc.pattern != "" {
				var details []string
				for _, v := range r.Violations {
					details = append(details, v.String())
				}
				require.Contains(t, strings.Join(details, "\n"), tc.pattern)
			}
		})
	}
}

// TestDeletesDoNotBreakValueAttribution: deletes write no value, so two
// of them on one key do not make the history uncheckable, and a read of
// an empty value is a put's, never a delete's.
func TestDeletesDoNotBreakValueAttribution(t *testing.T) {
	read := get(S, 2, y, "", 60, 70)
	read.Found = true
	events := numbered(del(S, 1, x, 0, 10), del(S, 2, x, 0, 10), get(S, 3, x, "", 20, 30),
		put(S, 1, y, "", 40, 50), read)
	r := Check(&history.File{Events: events}, Options{})
	require.NoError(t, r.Err)
	require.True(t, r.Clean(), "%v", r.Violations)
}

// TestCausalWithDeletesAgreesWithClosure: with deletes among the writes,
// the sweep flags exactly what the brute-force closure does, a read that
// found nothing being stale only when no delete explains it.
func TestCausalWithDeletesAgreesWithClosure(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	flagged := 0
	for seed := range uint64(800) {
		c := genConfig{ops: 10 + rng.IntN(40), sessions: 2 + rng.IntN(4), pipeline: 1 + rng.IntN(4),
			writeShare: 0.2 + 0.5*rng.Float64(), weakShare: rng.Float64(), hotKeys: 1 + rng.IntN(3), keys: 2,
			hotShare: 0.8, deleteShare: 0.2 + 0.5*rng.Float64(), seed: seed}
		events := generate(c)
		if r := Check(&history.File{Events: events}, Options{}); !r.Clean() {
			t.Fatalf("seed %d: a correct store's history with deletes: %v", seed, r.Violations)
		}
		for range rng.IntN(3) {
			redirectPast(rng, events)
		}
		for i := range events {
			if e := &events[i]; rng.IntN(12) == 0 {
				e.Slot = 0
			}
		}
		want := closureFindings(t, events)
		got := checkerFindings(t, events)
		require.Equal(t, want, got, "seed %d", seed)
		if len(want) > 0 {
			flagged++
		}
	}
	t.Logf("%d of 800 histories have causal violations", flagged)
	require.Greater(t, flagged, 50)
}

// TestS1WithDeletesIsSound: on histories with deletes and reads redirected
// at random, S1 is reported only where porcupine's exhaustive search over
// the whole history (reads that found nothing included, a delete setting
// the key absent) finds the key not linearizable; and it is reported for
// most of those.
func TestS1WithDeletesIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	flagged, refBad, total := 0, 0, 0
	for seed := range uint64(1500) {
		c := genConfig{ops: 8 + rng.IntN(17), sessions: 2 + rng.IntN(3), pipeline: 1 + rng.IntN(3),
			writeShare: 0.2 + 0.5*rng.Float64(), weakShare: 0.5 * rng.Float64(), hotKeys: 1, keys: 1,
			hotShare: 1, deleteShare: 0.2 + 0.4*rng.Float64(), seed: seed}
		events := generate(c)
		for range rng.IntN(3) {
			redirect(rng, events)
		}
		r := Check(&history.File{Events: events}, Options{MaxPerProperty: -1})
		require.NoError(t, r.Err)
		ours := strings.Contains(strings.Join(properties(r), ","), "S1")
		ref, ok := referenceS1(t, events)
		if !ok {
			continue
		}
		total++
		if ref {
			refBad++
		}
		if ours {
			flagged++
			require.True(t, ref, "seed %d: S1 reported on a linearizable history: %v", seed, r.Violations)
		}
	}
	t.Logf("of %d histories, %d are not linearizable, %d of them caught", total, refBad, flagged)
	require.Greater(t, refBad, total/10)
	require.Greater(t, flagged, refBad*3/4)
}

// referenceS1 decides S1 with porcupine over every strong read with a
// result and every write, spans as the checker gives them; ok is false
// when the search timed out.
func referenceS1(t *testing.T, events []history.Event) (bad, ok bool) {
	rep := newReporter(-1, guarantees.All)
	h, err := index(&history.File{Events: events}, rep, false)
	require.NoError(t, err)
	l := &lin{h: h, bound: latestPoints(h), model: kvModel(h)}
	var ops []int32
	for i := range h.ops {
		o := &h.ops[i]
		if o.write || o.strong && o.rf != thinAir && !o.future {
			ops = append(ops, int32(i))
		}
	}
	switch porcupine.CheckOperationsTimeout(l.model, l.operations(ops), time.Second) {
	case porcupine.Unknown:
		return false, false
	case porcupine.Illegal:
		return true, true
	}
	// A read of a value before its put was invoked is a violation the
	// model's spans cannot show on their own.
	for i := range h.ops {
		if o := &h.ops[i]; o.strong && o.future {
			return true, true
		}
	}
	return false, true
}

// TestReadOfDeletedValueIsCaught mutates correct histories with deletes:
// a strong read that found nothing after a delete returns instead the
// value the delete removed, its put having returned before the delete was
// invoked and the delete before the read was. Every such history is
// reported.
func TestReadOfDeletedValueIsCaught(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 17))
	mutated := 0
	for seed := range uint64(2000) {
		c := genConfig{ops: 20 + rng.IntN(40), sessions: 2 + rng.IntN(4), pipeline: 1 + rng.IntN(3),
			writeShare: 0.3 + 0.4*rng.Float64(), weakShare: 0.3 * rng.Float64(), hotKeys: 1 + rng.IntN(2), keys: 1,
			hotShare: 0.9, deleteShare: 0.3 + 0.4*rng.Float64(), seed: seed}
		events := generate(c)
		if !mutateToDeletedValue(events) {
			continue
		}
		mutated++
		r := Check(&history.File{Events: events}, Options{})
		require.NoError(t, r.Err)
		require.False(t, r.Clean(), "seed %d: a read of a deleted value went unnoticed", seed)
	}
	t.Logf("%d of 2000 histories mutated", mutated)
	require.Greater(t, mutated, 100)
}

// mutateToDeletedValue finds a strong read that found nothing, the last
// write before it in the log a strong delete that returned before the read
// was invoked, and the write before that a strong put that returned
// before the delete was invoked; it makes the read return the put's value.
func mutateToDeletedValue(events []history.Event) bool {
	bySlot := map[uint64]*history.Event{}
	for i := range events {
		if e := &events[i]; e.IsWrite() {
			bySlot[e.Slot] = e
		}
	}
	for i := range events {
		r := &events[i]
		if r.Kind != wire.Get || r.Level != wire.Strong || r.Found {
			continue
		}
		var d, p *history.Event
		for s := uint64(len(events)); s > 0; s-- {
			w := bySlot[s]
			switch {
			case w == nil || w.Key != r.Key:
			case d == nil && w.Invoke < r.Return:
				d = w
			case d != nil:
				p = w
			}
			if p != nil {
				break
			}
		}
		if d == nil || p == nil || d.Kind != wire.Delete || p.Kind != wire.Put ||
			d.Level != wire.Strong || p.Level != wire.Strong || d.Return >= r.Invoke || p.Return >= d.Invoke {
			continue
		}
		r.Value, r.Found = p.Value, true
		return true
	}
	return false
}
