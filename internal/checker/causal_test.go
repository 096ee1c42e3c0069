package checker

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// The sweep must flag exactly the stale reads and misordered writes that a
// brute-force transitive closure of causal order finds, on small histories
// with pipelining, unknown outcomes, missing slots and corrupted reads.
func TestCausalAgreesWithClosure(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	flagged := 0
	for seed := range uint64(1500) {
		c := genConfig{ops: 10 + rng.IntN(40), sessions: 2 + rng.IntN(4), pipeline: 1 + rng.IntN(4),
			writeShare: 0.2 + 0.5*rng.Float64(), weakShare: rng.Float64(), hotKeys: 1 + rng.IntN(3), keys: 2,
			hotShare: 0.8, seed: seed}
		events := generate(c)
		for range rng.IntN(3) {
			redirectPast(rng, events)
		}
		for i := range events {
			e := &events[i]
			switch rng.IntN(12) {
			case 0:
				if e.IsWrite() {
					e.Outcome, e.Return = history.Unknown, 0
				}
			case 1:
				e.Slot = 0
			case 2:
				if j := rng.IntN(len(events)); e.IsWrite() && events[j].IsWrite() {
					e.Slot, events[j].Slot = events[j].Slot, e.Slot
				}
			}
		}
		want := closureFindings(t, events)
		got := checkerFindings(t, events)
		require.Equal(t, want, got, "seed %d", seed)
		if len(want) > 0 {
			flagged++
		}
	}
	t.Logf("%d of 1500 histories have causal violations", flagged)
	require.Greater(t, flagged, 100)
}

// redirectPast makes a random read return a put on its key invoked before
// the read returned (so no future reads), or nothing.
func redirectPast(rng *rand.Rand, events []history.Event) {
	r := &events[rng.IntN(len(events))]
	if r.Kind != wire.Get {
		return
	}
	var puts [][]byte
	for i := range events {
		if w := &events[i]; w.Kind == wire.Put && w.Key == r.Key && w.Invoke <= r.Return {
			puts = append(puts, w.Value)
		}
	}
	if p := rng.IntN(len(puts) + 1); p < len(puts) {
		r.Value, r.Found = puts[p], true
	} else {
		r.Value, r.Found = nil, false
	}
}

// closureFindings computes causal order by brute force and returns the
// reads that are stale and the puts logged before a put in their past. A
// read of one write of a transaction's branch has all of them in its past.
func closureFindings(t *testing.T, events []history.Event) map[string]bool {
	return closureFindingsOf(t, events, true)
}

// closureFindingsOf is closureFindings, with atomic false leaving out
// that a transaction's writes take effect together and its reads read one
// state.
func closureFindingsOf(t *testing.T, events []history.Event, atomic bool) map[string]bool {
	h, past := closure(t, events, atomic)
	n := len(h.ops)
	found := map[string]bool{}
	for b := range n {
		o := &h.ops[b]
		for a := range n {
			w := &h.ops[a]
			if !past[b][a] || !w.write || w.key != o.key || a == b {
				continue
			}
			if o.write {
				if o.slot != 0 && w.slot > o.slot {
					found["cf "+h.name(int32(b))] = true
				}
				continue
			}
			switch rf := o.rf; {
			case rf == thinAir || int(rf) == a:
			case rf == notFound:
				if !explainedByDelete(h, past, b) {
					found["stale "+h.name(int32(b))] = true
				}
			case h.ops[rf].slot != 0 && w.slot > h.ops[rf].slot,
				past[a][rf]:
				found["stale "+h.name(int32(b))] = true
			}
		}
	}
	return found
}

// closure indexes events and computes causal order by brute force:
// past[b][a] holds when a →co b. With atomic, a read of one write of a
// transaction's branch has all of them in its past, and the reads of one
// transaction share their pasts.
func closure(t *testing.T, events []history.Event, atomic bool) (*hist, [][]bool) {
	h, err := index(&history.File{Events: events}, newReporter(-1, guarantees.All), false)
	require.NoError(t, err)
	n := len(h.ops)
	edge := func(a, b *op) bool {
		switch {
		case a.sess == b.sess && a.ret < b.inv:
			return true
		case a.strong && b.strong && a.ret < b.inv:
			return true
		}
		return false
	}
	past := make([][]bool, n) // past[b][a]: a →co b
	for b := range n {
		past[b] = make([]bool, n)
		var stack []int
		push := func(a int) {
			if !past[b][a] {
				past[b][a] = true
				stack = append(stack, a)
			}
		}
		for a := range n {
			if edge(&h.ops[a], &h.ops[b]) {
				push(a)
			}
		}
		for _, r := range snapOf(h, int32(b), atomic) {
			if rf := h.ops[r].rf; !h.ops[r].write && rf >= 0 {
				push(int(rf))
				if atomic {
					pushGroup(h, rf, push)
				}
			}
		}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for a := range n {
				if edge(&h.ops[a], &h.ops[x]) {
					push(a)
				}
			}
			for _, r := range snapOf(h, int32(x), atomic) {
				if rf := h.ops[r].rf; !h.ops[r].write && rf >= 0 {
					push(int(rf))
					if atomic {
						pushGroup(h, rf, push)
					}
				}
			}
		}
	}
	return h, past
}

// snapOf returns op i and, if atomic, the reads that read one state with
// it.
func snapOf(h *hist, i int32, atomic bool) []int32 {
	if sn := h.snap(i); sn >= 0 && atomic {
		return h.snaps[sn]
	}
	return []int32{i}
}

// pushGroup pushes the writes that take effect with write w.
func pushGroup(h *hist, w int32, push func(int)) {
	if g := h.grp(w); g >= 0 {
		for _, m := range h.groups[g].members {
			push(int(m))
		}
	}
}

// explainedByDelete reports whether read b, which found nothing, may have
// read a delete of its key invoked before it returned: one that no write
// in its past is newer than (logged later, or causally after it).
func explainedByDelete(h *hist, past [][]bool, b int) bool {
	o := &h.ops[b]
	for d := range h.ops {
		dop := &h.ops[d]
		if !dop.del || dop.key != o.key || dop.inv >= o.ret {
			continue
		}
		superseded := false
		for a := range h.ops {
			w := &h.ops[a]
			if past[b][a] && w.write && w.key == o.key && a != d &&
				(dop.slot != 0 && w.slot > dop.slot || past[a][d]) {
				superseded = true
				break
			}
		}
		if !superseded {
			return true
		}
	}
	return false
}

// checkerFindings runs the checker over events and names its causal
// findings as closureFindings does: stale reads, and CyclicCF by its
// second operation.
func checkerFindings(t *testing.T, events []history.Event) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	r := Check(&history.File{Events: events}, Options{MaxPerProperty: -1})
	require.NoError(t, r.Err)
	for _, v := range r.Violations {
		for _, p := range []string{"WriteCOInitRead", "WriteCORead", "StaleLogRead"} {
			if strings.HasPrefix(v.Detail, p) {
				got["stale "+v.Ops[0].Name()] = true
			}
		}
		if strings.HasPrefix(v.Detail, "CyclicCF") {
			got["cf "+v.Ops[1].Name()] = true
		}
	}
	return got
}

// A future read brings the write it read into its reader's past without
// that write's own past (the sweep leaves the edge out). A later, ordinary
// read of the same write must still bring its past along: session 1 reads
// b, then writes c; session 2 reads c once before c was invoked, once
// after, and then reads a, older than b in session 3, which is in its
// past through c.
func TestReadAfterAFutureReadTakesTheWritesPast(t *testing.T) {
	events := numbered(put(W, 3, x, "a", 0, 5), put(W, 3, x, "b", 10, 15),
		get(W, 1, x, "b", 16, 17), put(W, 1, y, "c", 20, 25),
		get(W, 2, y, "c", 16, 18), get(W, 2, y, "c", 30, 35), get(W, 2, x, "a", 40, 45))
	r := checkClaiming(events, guarantees.All)
	var stale bool
	for _, v := range r.Violations {
		for _, name := range opNames(v) {
			stale = stale || name == "2.3"
		}
	}
	require.True(t, stale, "the read of a is stale: %v", r.Violations)
}
