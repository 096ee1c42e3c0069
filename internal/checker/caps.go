package checker

import (
	"cmp"
	"math"
	"slices"
)

// latestPoints returns, for every op, the earliest return among the strong
// ops that completed and are causally after it (never when there is none).
//
// S1 needs one order of strong ops and weak puts consistent with causal
// order, so a weak put (or a put of unknown outcome) must come before
// every strong op causally after it, hence before the earliest return of
// one. Giving the linearizability check that bound instead of an open
// interval catches, for example, a strong read that misses a weak put its
// own session made before an earlier strong op. Since the bound only
// demands "before that strong op returned" rather than "before that
// strong op", it can hide a violation but not invent one; it also keeps
// porcupine's search (visualization, cross-check) from trying such a put
// at every later point.
//
// A strong op's own successors in real-time order cannot lower the bound
// below its own return, so only session order and reads-from are
// followed. Every such edge goes forward in the order used by the causal
// sweep, so one pass in reverse of it settles every op: a write after
// everything after its invocation, a read after everything after its
// return. Per-session suffix minima over invocation times answer "the
// earliest bound among this session's ops invoked after t" in O(log n).
//
// The writes of a group (a transaction's branch) take effect together, so
// what is causally after one bounds them all: each gets the least bound of
// the group. They share an invocation, so the reverse pass reaches them
// after every op that bounds any of them.
func latestPoints(h *hist) []int64 {
	const unset = math.MinInt64
	n := len(h.ops)
	// below[i]: min over strong completed ops strictly causally after i.
	below := make([]int64, n)
	for i := range below {
		below[i] = never
	}
	// Per session: ops by invocation, and a Fenwick tree of minima over
	// the reversed order, so a prefix of the tree is a suffix of the ops.
	bySess := make([][]int32, h.sessions)
	for i := range h.ops {
		bySess[h.ops[i].sess] = append(bySess[h.ops[i].sess], int32(i))
	}
	pos := make([]int32, n) // rank in bySess, by invocation
	trees := make([][]int64, h.sessions)
	for s, l := range bySess {
		slices.SortFunc(l, func(a, b int32) int { return cmp.Compare(h.ops[a].inv, h.ops[b].inv) })
		for p, x := range l {
			pos[x] = int32(p)
		}
		t := make([]int64, len(l)+1)
		for i := range t {
			t[i] = never
		}
		trees[s] = t
	}
	update := func(s int32, p int, v int64) {
		t := trees[s]
		for i := len(t) - 1 - p; i < len(t); i += i & -i {
			t[i] = min(t[i], v)
		}
	}
	// query: the minimum over the session's ops at ranks >= p.
	query := func(s int32, p int) int64 {
		t, m := trees[s], int64(never)
		for i := len(t) - 1 - p; i > 0; i -= i & -i {
			m = min(m, t[i])
		}
		return m
	}

	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	at := func(i int32) (int64, int) { // position in the sweep; reads after writes at equal times
		if o := &h.ops[i]; !o.write {
			return o.ret, 1
		}
		return h.ops[i].inv, 0
	}
	slices.SortFunc(order, func(a, b int32) int {
		ta, ka := at(a)
		tb, kb := at(b)
		if c := cmp.Compare(ta, tb); c != 0 {
			return c
		}
		return cmp.Compare(ka, kb)
	})
	groupBelow := make([]int64, len(h.groups))
	for g := range groupBelow {
		groupBelow[g] = unset
	}
	for k := n - 1; k >= 0; k-- {
		i := order[k]
		o := &h.ops[i]
		if o.ok {
			l := bySess[o.sess]
			p, _ := slices.BinarySearchFunc(l, o.ret, func(x int32, t int64) int {
				if h.ops[x].inv <= t {
					return -1
				}
				return 1
			})
			if p < len(l) {
				below[i] = min(below[i], query(o.sess, p))
			}
		}
		if g := h.grp(i); g >= 0 {
			if groupBelow[g] == unset {
				// Its session's ops after it bound every member alike.
				m := below[i]
				for _, j := range h.groups[g].members {
					m = min(m, below[j])
				}
				groupBelow[g] = m
			}
			below[i] = groupBelow[g]
		}
		self := below[i]
		if o.strong && o.ok {
			self = min(self, o.ret)
		}
		update(o.sess, int(pos[i]), self)
		if !o.write && o.rf >= 0 && !o.future {
			below[o.rf] = min(below[o.rf], self)
		}
	}
	return below
}
