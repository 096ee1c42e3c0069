package checker

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
)

// cacheClaims is what a protocol whose weak reads use a client-side cache
// per key might claim: read-your-writes and monotonic reads per key, but
// neither monotonic writes, writes-follow-reads, causal visibility nor
// C2.
var cacheClaims = guarantees.S1 | guarantees.W1 | guarantees.W2 | guarantees.W6 |
	guarantees.C1 | guarantees.C3 | guarantees.E1 | guarantees.X1

func checkClaiming(events []history.Event, claimed guarantees.Set) Result {
	return Check(&history.File{Events: events}, Options{Claims: guarantees.Claims{Set: claimed}})
}

// Result says what was verified and what the protocol does not claim.
func TestResultNamesWhatWasChecked(t *testing.T) {
	events := numbered(put(W, 1, x, "a", 0, 10), get(W, 1, x, "a", 20, 30))
	r := checkClaiming(events, cacheClaims)
	require.True(t, r.Clean(), "%v", r.Violations)
	assert.Equal(t, "S1,W1,W2,W6,C1,C3,E1,X1", r.Verified.String())
	assert.Equal(t, "W3,W4,W5,C2,D1", r.Unclaimed.String())
	assert.Zero(t, r.NotVerified)
	for p := range r.Checked {
		assert.Contains(t, r.Verified.String(), p, "an unclaimed property counted")
	}
	assert.NotContains(t, r.Checked, "W5")

	r = checkClaiming(events, guarantees.All)
	assert.Equal(t, Checkable, r.Verified)
	assert.Zero(t, r.Unclaimed)
	assert.Equal(t, guarantees.D1, r.NotVerified, "D1 is claimed but not checked")

	r = Check(&history.File{Events: events}, Options{})
	assert.Equal(t, Checkable, r.Verified, "the zero Set claims everything")
	assert.Equal(t, guarantees.D1, r.NotVerified)
}

// (a) A stale read that only causal visibility explains: session 3 saw b,
// written after its writer read a, yet finds nothing on x. Reported as W5
// when everything is claimed; no violation at all for a protocol that
// does not claim W5 (nor any other pattern that explains it).
func TestStaleReadOnlyW5ExplainsIsUnclaimed(t *testing.T) {
	events := numbered(put(W, 1, x, "a", 0, 5), get(W, 2, x, "a", 10, 15), put(W, 2, y, "b", 20, 25),
		get(W, 3, y, "b", 30, 35), get(W, 3, x, "", 40, 45))
	r := checkClaiming(events, guarantees.All)
	require.Equal(t, []string{"W5"}, properties(r), "%v", r.Violations)
	assert.Contains(t, r.Violations[0].Detail, "WriteCOInitRead")

	r = checkClaiming(events, cacheClaims)
	require.NoError(t, r.Err)
	assert.True(t, r.Clean(), "%v", r.Violations)

	// W5 alone claimed: still caught.
	r = checkClaiming(events, guarantees.W5)
	assert.Equal(t, []string{"W5"}, properties(r), "%v", r.Violations)
}

// (b) A weak read that misses its session's earlier put on the key breaks
// read-your-writes, whatever else is claimed.
func TestReadYourWritesFailureIsW1UnderEitherClaim(t *testing.T) {
	for name, events := range map[string][]history.Event{
		"found nothing": numbered(put(W, 1, x, "a", 0, 10), get(W, 1, x, "", 20, 30)),
		"older value in the log": numbered(slot(put(W, 2, x, "a", 0, 5), 1), slot(put(W, 1, x, "b", 10, 20), 2),
			get(W, 1, x, "a", 30, 40)),
	} {
		for _, claimed := range []guarantees.Set{guarantees.All, cacheClaims} {
			r := checkClaiming(events, claimed)
			require.Equal(t, []string{"W1"}, properties(r), "%s, claiming %v: %v", name, claimed, r.Violations)
			assert.Contains(t, r.Violations[0].Detail, "missed its session's earlier put", name)
		}
	}
}

// (c) Session 2 reads b, then a, on one key: monotonic reads broken. Both
// were written by session 1, a before b, so the monotonic-writes pattern
// matches too and, everything claimed, the read is filed under W3, which
// is more specific. A protocol that claims W2 but not W3 gets it as W2:
// each pattern is tested on its own, not only the first that matches.
func TestMonotonicReadsFailureIsW2WhenW3IsUnclaimed(t *testing.T) {
	events := numbered(put(W, 1, x, "a", 0, 5), put(W, 1, x, "b", 10, 15),
		get(W, 2, x, "b", 20, 25), get(W, 2, x, "a", 30, 35))
	r := checkClaiming(events, guarantees.All)
	require.Equal(t, []string{"W3"}, properties(r), "%v", r.Violations)

	r = checkClaiming(events, cacheClaims)
	require.Equal(t, []string{"W2"}, properties(r), "%v", r.Violations)
	v := r.Violations[0]
	assert.Contains(t, v.Detail, "earlier read 2.1 already returned a newer value")
	assert.Equal(t, []string{"2.2", "1.1", "1.2", "2.1"}, opNames(v))

	// Claiming W3 but not W2 files it under W3; claiming neither (nor W4,
	// W5), it is not reported.
	r = checkClaiming(events, guarantees.W3|guarantees.S1)
	assert.Equal(t, []string{"W3"}, properties(r), "%v", r.Violations)
	r = checkClaiming(events, guarantees.S1|guarantees.W1|guarantees.C1|guarantees.C2)
	assert.True(t, r.Clean(), "%v", r.Violations)
}

// W4 is matched only when the write read is in the newer one's causal
// past: a read that is stale in the log alone (the two writes concurrent)
// is causal visibility's, not writes-follow-reads'.
func TestW4NeedsCausalOrderBetweenTheWrites(t *testing.T) {
	// 3 reads a although b, logged after it, is in its past through y.
	events := numbered(slot(put(W, 1, x, "a", 0, 5), 1), slot(put(W, 2, x, "b", 0, 5), 2), slot(put(W, 2, y, "c", 10, 15), 3),
		get(W, 3, y, "c", 20, 25), get(W, 3, x, "a", 30, 35))
	r := checkClaiming(events, guarantees.All)
	require.Equal(t, []string{"W5"}, properties(r), "%v", r.Violations)
	assert.Contains(t, r.Violations[0].Detail, "StaleLogRead")
	r = checkClaiming(events, guarantees.All&^guarantees.W5)
	assert.True(t, r.Clean(), "%v", r.Violations)
}

// A read that found nothing on a key with deletes breaks a guarantee only
// if the pattern holds whichever delete it read. Here session 1's own put
// a is older than session 2's delete, which is older than session 3's put
// b, and the read of session 1 has all three in its past: it is stale
// (W5), but had it read the delete it would not have missed a, so it is
// no read-your-writes failure.
func TestFoundNothingMatchesAPatternForEveryDelete(t *testing.T) {
	events := numbered(put(W, 1, x, "a", 0, 5), get(W, 2, x, "a", 10, 15), del(W, 2, x, 20, 25),
		put(W, 2, y, "e", 26, 29), get(W, 3, y, "e", 30, 35), put(W, 3, x, "b", 40, 45), put(W, 3, y, "c", 50, 55),
		get(W, 1, y, "c", 60, 65), get(W, 1, x, "", 70, 75))
	r := checkClaiming(events, guarantees.All)
	require.Equal(t, []string{"W5"}, properties(r), "%v", r.Violations)
	r = checkClaiming(events, guarantees.W1|guarantees.W2)
	assert.True(t, r.Clean(), "a read that may have read d is no read-your-writes failure: %v", r.Violations)
}

// (d) An S1 violation is reported only when S1 is claimed.
func TestS1ViolationIsUnclaimed(t *testing.T) {
	// Two readers see concurrent puts in opposite orders: S1 only.
	events := numbered(put(S, 1, x, "a", 0, 10), put(S, 2, x, "b", 0, 10),
		get(S, 3, x, "a", 20, 30), get(S, 3, x, "b", 40, 50),
		get(S, 4, x, "b", 20, 30), get(S, 4, x, "a", 40, 50))
	r := checkClaiming(events, guarantees.All)
	require.Equal(t, []string{"S1"}, properties(r), "%v", r.Violations)
	r = checkClaiming(events, guarantees.All&^guarantees.S1)
	require.NoError(t, r.Err)
	assert.True(t, r.Clean(), "%v", r.Violations)
	assert.NotContains(t, r.Checked, "S1")
	assert.False(t, r.Verified.Has(guarantees.S1))

	// A stale strong read breaks S1 and W5; without S1, only W5 is left.
	events = numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "b", 20, 30), get(S, 2, x, "a", 40, 50))
	r = checkClaiming(events, guarantees.All&^guarantees.S1)
	assert.Equal(t, []string{"W5"}, properties(r), "%v", r.Violations)
}

// The other properties are filtered by the claim alone.
func TestUnclaimedPropertiesAreNotReported(t *testing.T) {
	tests := []struct {
		name     string
		events   []history.Event
		replicas []history.ReplicaState
		prop     guarantees.Set
	}{
		{name: "C3", events: numbered(slot(put(W, 1, x, "a", 0, 5), 7), slot(get(W, 2, x, "a", 10, 15), 5)),
			prop: guarantees.C3},
		{name: "E1", replicas: []history.ReplicaState{{ID: 1, Applied: 10, Digest: 5}, {ID: 2, Applied: 10, Digest: 6}},
			prop: guarantees.E1},
		{name: "X1", events: []history.Event{put(W, 1, x, "a", 0, 5), get(W, 2, x, "a", 10, 15), get(W, 2, x, "", 10, 15)},
			prop: guarantees.X1},
		{name: "W6 thin air", events: numbered(put(W, 1, x, "a", 0, 5), get(W, 2, x, "zz", 10, 20)),
			prop: guarantees.W6},
		{name: "W6 future read", events: numbered(get(W, 1, x, "a", 0, 10), put(W, 2, x, "a", 20, 30)),
			prop: guarantees.W6},
		{name: "W5 CyclicCO", events: numbered(get(W, 1, y, "b", 0, 10), put(W, 1, x, "a", 20, 30),
			get(W, 2, x, "a", 0, 10), put(W, 2, y, "b", 20, 30)),
			prop: guarantees.W5},
		{name: "W3 CyclicCF", events: numbered(slot(put(W, 1, x, "a", 0, 5), 2), slot(put(W, 1, x, "b", 10, 15), 1)),
			prop: guarantees.W3},
		{name: "W4 CyclicCF", events: numbered(slot(put(W, 1, x, "a", 0, 5), 2), get(W, 2, x, "a", 10, 15),
			slot(put(W, 2, x, "b", 20, 25), 1)),
			prop: guarantees.W4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &history.File{Events: tc.events, Replicas: tc.replicas}
			r := Check(f, Options{Claims: guarantees.Claims{Set: tc.prop}})
			require.Equal(t, []string{tc.prop.String()}, properties(r), "%v", r.Violations)
			r = Check(f, Options{Claims: guarantees.Claims{Set: guarantees.All &^ tc.prop}})
			require.NoError(t, r.Err)
			assert.True(t, r.Clean(), "%v", r.Violations)
		})
	}
}

func opNames(v Violation) []string {
	var names []string
	for i := range v.Ops {
		names = append(names, v.Ops[i].Name())
	}
	return names
}

// stalePatterns are the guarantees a stale read is filed under, in the
// classifier's order.
var stalePatterns = []guarantees.Set{guarantees.C1, guarantees.W1, guarantees.C2, guarantees.W3,
	guarantees.W2, guarantees.W4, guarantees.W5}

// TestStaleReadsUnderClaimsAgreeWithClosure: on random histories with
// deletes, and a random set of guarantees claimed, each stale read is
// reported under the first claimed pattern that a brute-force causal
// closure finds it matches (for each thing a read that found nothing may
// have read), and is not reported when none does. C2 needs the checker to
// see that the reader observed a strong op, which it may miss (the read is
// then filed under a later pattern, or not at all, and only that pattern
// is required to hold); with C2 not claimed, the two must agree exactly.
func TestStaleReadsUnderClaimsAgreeWithClosure(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 17))
	reported, moved, dropped := 0, 0, 0
	for seed := range uint64(1200) {
		c := genConfig{ops: 10 + rng.IntN(30), sessions: 2 + rng.IntN(4), pipeline: 1 + rng.IntN(3),
			writeShare: 0.2 + 0.5*rng.Float64(), weakShare: rng.Float64(), hotKeys: 1 + rng.IntN(2), keys: 2,
			hotShare: 0.8, seed: seed}
		if seed%2 == 1 {
			c.deleteShare = 0.2 + 0.4*rng.Float64()
		}
		events := generate(c)
		for range 1 + rng.IntN(3) {
			redirectPast(rng, events)
		}
		for i := range events {
			if e := &events[i]; rng.IntN(10) == 0 {
				e.Slot = 0
			}
		}
		h, past := closure(t, events, true)
		claimed := guarantees.Set(1+rng.IntN(int(guarantees.All))) & guarantees.All
		if claimed == 0 {
			claimed = guarantees.All
		}
		want := map[string][]string{} // read → every claimed pattern it matches, in order
		first := map[string]string{}  // read → the first pattern it matches, claimed or not
		for b := range h.ops {
			name := h.name(int32(b))
			for _, p := range closurePatterns(h, past, int32(b)) {
				if first[name] == "" {
					first[name] = p.String()
				}
				if claimed.Has(p) {
					want[name] = append(want[name], p.String())
				}
			}
		}
		r := Check(&history.File{Events: events}, Options{MaxPerProperty: -1, Claims: guarantees.Claims{Set: claimed}})
		require.NoError(t, r.Err)
		got := map[string]string{}
		for _, v := range r.Violations {
			for _, p := range []string{"WriteCOInitRead", "WriteCORead", "StaleLogRead"} {
				if strings.HasPrefix(v.Detail, p) {
					got[v.Ops[0].Name()] = v.Property
				}
			}
		}
		for read, prop := range got {
			require.Contains(t, want[read], prop, "seed %d, claiming %v: %s reported under %s", seed, claimed, read, prop)
			if prop != first[read] {
				moved++
			}
		}
		for read, props := range want {
			if !claimed.Has(guarantees.C2) || props[0] != "C2" {
				require.Equal(t, props[0], got[read], "seed %d, claiming %v: read %s matches %v", seed, claimed, read, props)
			} else if claimed.Has(guarantees.W5) {
				require.Contains(t, got, read, "seed %d, claiming %v", seed, claimed)
			}
		}
		reported += len(got)
		dropped += len(first) - len(want)
	}
	t.Logf("%d stale reads reported, %d of them under a later pattern than with every guarantee claimed; %d not reported, as no claimed pattern explains them",
		reported, moved, dropped)
	require.Greater(t, reported, 100)
	require.Greater(t, moved, 20)
	require.Greater(t, dropped, 50)
}

// closurePatterns returns the patterns stale read b matches, in the
// classifier's order, computed from the causal closure past; nil when b
// is not a stale read. A pattern matches when, for each thing b may have
// read (the write it returned; for a read that found nothing, the initial
// state or any delete of its key invoked before it returned), some write
// in b's past newer than it matches.
func closurePatterns(h *hist, past [][]bool, b int32) []guarantees.Set {
	o := &h.ops[b]
	if o.write || o.rf == thinAir || o.future {
		return nil
	}
	cands := []int32{o.rf}
	if o.rf == notFound {
		for d := range h.ops {
			if dop := &h.ops[d]; dop.del && dop.key == o.key && dop.inv < o.ret {
				cands = append(cands, int32(d))
			}
		}
	}
	newer := func(a, w1 int32) bool { // write a newer than w1
		switch {
		case w1 == notFound:
			return true
		case h.ops[a].slot != 0 && h.ops[w1].slot != 0:
			return h.ops[a].slot > h.ops[w1].slot
		}
		return past[a][w1]
	}
	witnesses := func(w1 int32) []int32 {
		var ws []int32
		for a := range h.ops {
			w := &h.ops[a]
			if !past[b][a] || !w.write || w.key != o.key || int32(a) == w1 || a == int(b) {
				continue
			}
			if w1 == notFound || h.ops[w1].slot != 0 && w.slot > h.ops[w1].slot || past[a][w1] {
				ws = append(ws, int32(a))
			}
		}
		return ws
	}
	sameSessBefore := func(w1, w2 int32) bool {
		return w1 >= 0 && h.ops[w1].sess == h.ops[w2].sess && h.ops[w1].ret < h.ops[w2].inv
	}
	tests := map[guarantees.Set]func(w1, w2 int32) bool{
		guarantees.C1: func(_, w2 int32) bool {
			wo := &h.ops[w2]
			return o.strong && !wo.strong && wo.sess == o.sess && wo.ret < o.inv
		},
		guarantees.W1: func(_, w2 int32) bool {
			wo := &h.ops[w2]
			return !o.strong && wo.sess == o.sess && wo.ret < o.inv
		},
		guarantees.C2: func(_, w2 int32) bool {
			wo := &h.ops[w2]
			if wo.strong || wo.sess == o.sess {
				return false
			}
			for s := range h.ops {
				so := &h.ops[s]
				if so.sess == wo.sess && so.strong && so.ok && so.inv > wo.ret && past[b][s] {
					return true
				}
			}
			return false
		},
		guarantees.W3: func(w1, w2 int32) bool { return !o.strong && sameSessBefore(w1, w2) },
		guarantees.W2: func(w1, w2 int32) bool {
			if o.strong {
				return false
			}
			for e := range h.ops {
				eo := &h.ops[e]
				if eo.write || eo.sess != o.sess || eo.key != o.key || eo.ret >= o.inv || eo.rf < 0 {
					continue
				}
				if eo.rf == w2 || eo.rf != w1 && newer(eo.rf, w1) {
					return true
				}
			}
			return false
		},
		guarantees.W4: func(w1, w2 int32) bool {
			return !o.strong && w1 >= 0 && !sameSessBefore(w1, w2) && past[w2][w1]
		},
		guarantees.W5: func(int32, int32) bool { return true },
	}
	wits := make([][]int32, len(cands))
	for i, w1 := range cands {
		if wits[i] = witnesses(w1); len(wits[i]) == 0 {
			return nil
		}
	}
	var ps []guarantees.Set
	for _, p := range stalePatterns {
		if allMatch(cands, wits, tests[p]) {
			ps = append(ps, p)
		}
	}
	return ps
}

func allMatch(cands []int32, wits [][]int32, test func(w1, w2 int32) bool) bool {
	for i, w1 := range cands {
		if !slices.ContainsFunc(wits[i], func(w2 int32) bool { return test(w1, w2) }) {
			return false
		}
	}
	return true
}

// A weak write acknowledged once the leader logged it may be lost: its
// session's later read that misses it breaks read-your-writes when weak
// writes are durable once acknowledged, and nothing when the claims say
// they may be lost. So does a strong read that misses it (C1), and a log
// that holds it nowhere.
func TestLostWeakWritesOweNothingWhenTheClaimsSaySo(t *testing.T) {
	events := numbered(slot(put(W, 1, x, "a", 0, 5), 1), slot(put(W, 1, x, "b", 10, 20), 2),
		get(W, 1, x, "a", 30, 40), get(S, 1, x, "a", 50, 60))
	r := checkClaiming(events, guarantees.All)
	require.Contains(t, properties(r), "W1", "%v", r.Violations)

	lossy := Check(&history.File{Events: events},
		Options{Claims: guarantees.Claims{Set: guarantees.All, WeakWritesMayBeLost: true}})
	require.NoError(t, lossy.Err)
	assert.True(t, lossy.Clean(), "%v", lossy.Violations)

	// Strong writes are owed their durability all the same.
	events = numbered(slot(put(S, 1, x, "a", 0, 5), 1), slot(put(S, 1, x, "b", 10, 20), 2),
		get(S, 1, x, "a", 30, 40))
	lossy = Check(&history.File{Events: events},
		Options{Claims: guarantees.Claims{Set: guarantees.All, WeakWritesMayBeLost: true}})
	assert.False(t, lossy.Clean(), "a lost strong write went unnoticed")
}

// TestNoStrongRealTime: session 1's strong put of x completes before
// session 2's strong put of y begins; session 2 then reads x weakly and
// finds nothing. With real time between strong operations in causal order
// the read is stale; a protocol that claims NoStrongRealTime (EPaxos-HO)
// owes it nothing, while S1 still holds each key's strong operations to
// real time.
func TestNoStrongRealTime(t *testing.T) {
	events := numbered(
		put(S, 1, x, "a", 0, 10),
		put(S, 2, y, "b", 20, 30),
		get(W, 2, x, "", 40, 50),
	)
	r := Check(&history.File{Events: events}, Options{Claims: guarantees.Claims{Set: guarantees.All}})
	require.False(t, r.Clean(), "the stale read went unnoticed")
	r = Check(&history.File{Events: events}, Options{Claims: guarantees.Claims{Set: guarantees.All, NoStrongRealTime: true}})
	require.True(t, r.Clean(), "%v", r.Violations)

	stale := numbered(put(S, 1, x, "a", 0, 10), get(S, 2, x, "", 20, 30))
	r = Check(&history.File{Events: stale}, Options{Claims: guarantees.Claims{Set: guarantees.All, NoStrongRealTime: true}})
	require.Contains(t, properties(r), "S1", "a strong read missed a strong write of its key that completed before it began")
}
