package checker

import (
	"cmp"
	"fmt"
	"slices"
)

// absentReads checks S1 for the strong reads that found nothing on a key
// with deletes. Such a read read the initial state or some delete, and
// which one is not known, so the cluster check, which needs every value
// unique, cannot take it. Each is checked on its own against what any
// linearization needs: if a put took effect before the read (its span
// ended before the read was invoked), a delete must fall between the two,
// so some delete's span must end no earlier than the put was invoked and
// begin no later than the read returned. The put invoked last among those
// that ended before the read is the one to test: a delete that fits after
// it fits after the others.
//
// It never reports a history that linearizes; it misses violations that
// only several reads together show (two reads that each need the same
// delete, on either side of a put), which the cluster check would find
// were the deletes' values distinct.
func (l *lin) absentReads(key string, reads []int32) *Violation {
	if len(reads) == 0 {
		return nil
	}
	h := l.h
	kw := h.keys[key]
	// Puts by the end of their span, and the reads by invocation: walking
	// the reads in order, the puts that ended before each are a growing
	// prefix, of which the one invoked last is kept.
	type span struct {
		inv, end int64
		put      int32
	}
	var puts []span
	for _, x := range kw.byInv {
		if !h.ops[x].del {
			inv, end := l.interval(x)
			puts = append(puts, span{inv, end, x})
		}
	}
	slices.SortStableFunc(puts, func(a, b span) int { return cmp.Compare(a.end, b.end) })
	byInv := slices.Clone(reads)
	slices.SortStableFunc(byInv, func(a, b int32) int { return cmp.Compare(h.ops[a].inv, h.ops[b].inv) })
	fits := l.deleteFits(kw)
	next, last := 0, int32(-1)
	for _, r := range byInv {
		ro := &h.ops[r]
		for ; next < len(puts) && puts[next].end < ro.inv; next++ {
			if last < 0 || puts[next].inv >= h.ops[last].inv {
				last = puts[next].put
			}
		}
		if last < 0 {
			continue // the initial state explains it
		}
		if !fits(h.ops[last].inv, ro.ret) {
			return &Violation{Property: "S1", Ops: h.report(last, r), Detail: fmt.Sprintf(
				"key %q: %v found nothing, but put %v took effect before it was invoked, and no delete of the key can take effect between them",
				key, h.name(r), h.name(last))}
		}
	}
	return nil
}

// deleteFits returns a test of whether a delete of the key may take
// effect in [from, to]: whether one invoked by to may end at from or
// later. The deletes are by invocation, so that is the latest end among a
// prefix of them.
func (l *lin) deleteFits(kw *keyWrites) func(from, to int64) bool {
	invs := make([]int64, len(kw.dels))
	latest := make([]int64, len(kw.dels))
	for p, d := range kw.dels {
		inv, end := l.interval(d)
		invs[p], latest[p] = inv, end
		if p > 0 {
			latest[p] = max(latest[p], latest[p-1])
		}
	}
	return func(from, to int64) bool {
		n, _ := slices.BinarySearchFunc(invs, to, func(inv, t int64) int {
			if inv <= t {
				return -1
			}
			return 1
		})
		return n > 0 && latest[n-1] >= from
	}
}
