package checker

import (
	"cmp"
	"fmt"
	"slices"
)

// logOrder checks S1 in its log form, when the run handed over its
// committed log: the log is the order in which puts take effect, so on
// each key no put may be logged after a put that was invoked once it had
// returned — with the spans S1 gives puts (a weak put, or one of unknown
// outcome, ends only where causal order forces it to; see latestPoints).
//
// The check by values sees such an inversion only if some read returns
// the older value before a third put hides both; a recovery that logs a
// fast-path put after a put invoked once it completed, on a key written
// again soon after, is otherwise missed. It checks every key, read or
// not, in O(n log n).
func (l *lin) logOrder() []Violation {
	h := l.h
	if h.logged == nil {
		return nil
	}
	byKey := map[string][]int32{}
	for i := range h.ops {
		o := &h.ops[i]
		if _, ok := h.logged[o.ev.ID()]; ok && o.write {
			byKey[o.key] = append(byKey[o.key], int32(i))
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []Violation
	for _, k := range keys {
		if v := l.logOrderOf(k, byKey[k]); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// logOrderOf checks one key's logged puts: walking back from the last
// logged, it keeps the earliest end among the puts logged later, and a
// put invoked after that end was logged too early.
func (l *lin) logOrderOf(key string, puts []int32) *Violation {
	h := l.h
	at := func(i int32) uint64 { return h.logged[h.ops[i].ev.ID()] }
	slices.SortFunc(puts, func(a, b int32) int { return cmp.Compare(at(a), at(b)) })
	earliest, by := int64(never), int32(-1)
	for p := len(puts) - 1; p >= 0; p-- {
		i := puts[p]
		inv, end := l.interval(i)
		if by >= 0 && earliest < inv {
			a, b := h.name(by), h.name(i)
			return &Violation{Property: "S1", Ops: h.report(i, by), Detail: fmt.Sprintf(
				"LogOrder: key %q: %v is logged at slot %d, before %v at slot %d, though %v was invoked after %v %s",
				key, b, at(i), a, at(by), b, a, l.endedHow(by))}
		}
		if end < earliest {
			earliest, by = end, i
		}
	}
	return nil
}

// endedHow says why put i's span ended where it did.
func (l *lin) endedHow(i int32) string {
	if o := &l.h.ops[i]; o.strong && o.ok {
		return "returned"
	}
	return "had to take effect (an op causally after it had returned)"
}
