package checker

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

const (
	// never is the return time of an operation whose outcome is unknown:
	// it may take effect at any point after its invocation.
	never = math.MaxInt64
	// Values of op.rf besides a write's index.
	notFound int32 = -1 // the read found no value
	thinAir  int32 = -2 // no put on the key wrote the value read
)

// op is an event prepared for checking. Reads without a result (failed or
// unanswered) are not ops at all: they observed nothing.
type op struct {
	ev     *history.Event
	inv    int64
	ret    int64 // never unless ok
	key    string
	slot   uint64
	sess   int32 // dense session index
	rf     int32 // reads: the write read, or notFound / thinAir
	wj     int32 // writes: index of the op's session in its key's writers
	strong bool
	write  bool
	del    bool // a delete: a write of "absent", which a read finding nothing may have read
	ok     bool
	future bool // a read that returned before the write it read was invoked
}

// keyWrites indexes the writes on one key by session, which is what the
// causal checks query: "which of session s's writes on k are in the
// causal past of this op?" is a prefix of s's list ordered by return time.
type keyWrites struct {
	writers []int32   // sessions that wrote the key, ascending
	lists   [][]int32 // per writer: its writes on the key by return time
	argmax  [][]int32 // per writer and prefix: the write with the highest known slot, or -1
	// byInv holds the key's writes by invocation, bySlot those with a
	// known slot by slot: a read's candidates for a newer write are the
	// writes invoked after the one it read, or logged after it.
	byInv, bySlot []int32
	slotInv       *minTree // the invocations of bySlot
	// dels holds the key's deletes by invocation: a read that found
	// nothing may have read any of them, or the initial state.
	dels []int32
}

// hist is a history prepared for checking.
type hist struct {
	// lossyWeak: acknowledged weak writes may be lost (see index).
	lossyWeak bool
	ops       []op
	sessions  int
	keys      map[string]*keyWrites
	readers   []int32 // per write: reads of it that returned after it was invoked
	// logged maps each operation in the run's committed log to the index
	// where it took effect; nil when the run handed over no log. The
	// sub-operations of a transaction share its identity, and its index.
	logged map[wire.OpID]uint64
	// parts places each op that is a sub-operation of a transaction in it
	// (see txn.go); nil when the history holds no transaction.
	parts []part
	// groups are the sets of writes that take effect together: the writes
	// of a transaction's branch.
	groups []group
	// snaps are the sets of reads that read one state: a transaction's,
	// when it has several.
	snaps [][]int32
}

// index validates and deduplicates the events, splits transactions into
// sub-operations, resolves every read to the write it observed, and
// reports X1, thin-air (W6) and a transaction's inconsistencies with
// itself.
//
// When acknowledged weak writes may be lost (lossyWeak), every weak write
// enters as of unknown outcome, with no slot: the acknowledgement promises
// nothing.
func index(f *history.File, rep *reporter, lossyWeak bool) (*hist, error) {
	if len(f.Events) >= math.MaxInt32 {
		return nil, fmt.Errorf("%d events: the checker indexes at most %d", len(f.Events), math.MaxInt32-1)
	}
	for i := range f.Events {
		if err := f.Events[i].Valid(); err != nil {
			return nil, err
		}
	}
	events := dedupe(f.Events, rep)
	h := &hist{keys: map[string]*keyWrites{}, lossyWeak: lossyWeak, ops: make([]op, 0, len(events))}
	sessions := map[uint64]int32{}
	var split *splitter
	for _, e := range events {
		if e.Kind != wire.Txn && !e.IsWrite() && e.Outcome != history.OK {
			continue // a read without an answer, a scan's too
		}
		s, ok := sessions[e.Session]
		if !ok {
			s = int32(len(sessions))
			sessions[e.Session] = s
		}
		if e.Kind.HasProgram() {
			if split == nil {
				split = newSplitter(h, events, rep)
			}
			split.txn(e, s)
			continue
		}
		h.add(op{ev: e, key: e.Key, write: e.IsWrite(), del: e.Kind == wire.Delete}, e, s)
	}
	h.sessions = len(sessions)
	if err := h.resolveReads(rep); err != nil {
		return nil, err
	}
	h.indexWrites()
	return h, nil
}

// add appends o, an op of event e's (dense) session s, with e's level,
// interval, outcome and slot.
func (h *hist) add(o op, e *history.Event, s int32) {
	o.inv, o.ret, o.slot, o.sess = e.Invoke, e.Return, e.Slot, s
	o.rf, o.strong, o.ok = notFound, e.Level == wire.Strong, e.Outcome == history.OK
	if h.lossyWeak && o.write && !o.strong {
		o.ok, o.slot = false, 0
	}
	if !o.ok {
		o.ret = never
	}
	h.ops = append(h.ops, o)
	if h.parts != nil {
		h.parts = append(h.parts, part{grp: -1, snap: -1})
	}
}

// name names op i in a report (see Op.Name).
func (h *hist) name(i int32) string {
	if h.parts != nil && h.parts[i].txn != nil {
		return subName(h.parts[i].txn, h.parts[i].at)
	}
	return h.ops[i].ev.ID().String()
}

// report lists ops for a violation.
func (h *hist) report(is ...int32) []Op {
	out := make([]Op, len(is))
	for k, i := range is {
		out[k] = Op{Event: *h.ops[i].ev}
		if h.parts != nil && h.parts[i].txn != nil {
			out[k].Txn, out[k].Part = h.parts[i].txn, h.parts[i].at.String()
		}
	}
	return out
}

// dedupe keeps one event per identity, preferring one with a result, at
// the place where the identity first appears. Two results for one
// identity mean the operation took effect twice (X1).
//
// Identities are grouped by sorting positions rather than hashing them: a
// ten-minute run records tens of millions of events, and a map entry per
// identity cost more memory than any other part of the check but the
// events themselves.
func dedupe(events []history.Event, rep *reporter) []*history.Event {
	rep.count(len(events), "X1")
	byID := make([]int32, len(events))
	for i := range byID {
		byID[i] = int32(i)
	}
	slices.SortFunc(byID, func(a, b int32) int {
		ea, eb := &events[a], &events[b]
		return cmp.Or(cmp.Compare(ea.Session, eb.Session), cmp.Compare(ea.Seq, eb.Seq), cmp.Compare(a, b))
	})
	// kept[i] is the event kept for the identity first seen at i, plus
	// one; 0 at the other positions.
	kept := make([]int32, len(events))
	n := 0
	for lo := 0; lo < len(byID); {
		first, keep := byID[lo], byID[lo]
		hi := lo + 1
		for ; hi < len(byID) && events[byID[hi]].ID() == events[first].ID(); hi++ {
			prev, e := &events[keep], &events[byID[hi]]
			switch {
			case prev.Outcome == history.OK && e.Outcome == history.OK:
				if !sameResult(prev, e) {
					rep.add(Violation{Property: "X1", Ops: plain(prev, e),
						Detail: fmt.Sprintf("operation %v completed twice with different results", e.ID())})
				}
			case e.Outcome == history.OK:
				keep = byID[hi]
			}
		}
		kept[first] = keep + 1
		n++
		lo = hi
	}
	out := make([]*history.Event, 0, n)
	for _, k := range kept {
		if k > 0 {
			out = append(out, &events[k-1])
		}
	}
	return out
}

func sameResult(a, b *history.Event) bool {
	return a.Level == b.Level && a.Kind == b.Kind && a.Key == b.Key && a.Found == b.Found &&
		bytes.Equal(a.Value, b.Value) && bytes.Equal(a.Result, b.Result) &&
		(a.Slot == 0 || b.Slot == 0 || a.Slot == b.Slot)
}

// resolveReads maps each read to the write whose value it returned. Values
// are unique per key, so this is a lookup by bytes; a duplicate makes the
// history uncheckable. A delete writes no value: a read that found nothing
// keeps notFound, which the checks take as the initial state or any
// delete of the key.
func (h *hist) resolveReads(rep *reporter) error {
	byValue := map[string]map[string]int32{}
	for i := range h.ops {
		o := &h.ops[i]
		if !o.write || o.del {
			continue
		}
		m := byValue[o.key]
		if m == nil {
			m = map[string]int32{}
			byValue[o.key] = m
		}
		if j, dup := m[string(o.ev.Value)]; dup {
			return fmt.Errorf("puts %v and %v both write %q to key %q: reads cannot be attributed",
				h.name(j), h.name(int32(i)), o.ev.Value, o.key)
		}
		m[string(o.ev.Value)] = int32(i)
	}
	h.readers = make([]int32, len(h.ops))
	reads := 0
	for i := range h.ops {
		o := &h.ops[i]
		if o.write || !o.ev.Found {
			continue
		}
		reads++
		w, ok := byValue[o.key][string(o.ev.Value)]
		if !ok {
			o.rf = thinAir
			rep.add(Violation{Property: "W6", Ops: h.report(int32(i)),
				Detail: fmt.Sprintf("ThinAirRead: no put on key %q wrote the value %v read", o.key, h.name(int32(i)))})
			continue
		}
		o.rf = w
		if h.ops[w].inv > o.ret {
			o.future = true // reported by checkCycles, which tells cycles apart
			continue
		}
		h.readers[w]++
	}
	rep.count(reads, "W6")
	return nil
}

func (h *hist) indexWrites() {
	for i := range h.ops {
		o := &h.ops[i]
		if !o.write {
			continue
		}
		kw := h.keys[o.key]
		if kw == nil {
			kw = &keyWrites{}
			h.keys[o.key] = kw
		}
		j, found := slices.BinarySearch(kw.writers, o.sess)
		if !found {
			kw.writers = slices.Insert(kw.writers, j, o.sess)
			kw.lists = slices.Insert(kw.lists, j, nil)
		}
		kw.lists[j] = append(kw.lists[j], int32(i))
		kw.byInv = append(kw.byInv, int32(i))
		if o.slot != 0 {
			kw.bySlot = append(kw.bySlot, int32(i))
		}
	}
	for _, kw := range h.keys {
		slices.SortFunc(kw.byInv, func(a, b int32) int { return cmpInt(h.ops[a].inv, h.ops[b].inv) })
		for _, w := range kw.byInv {
			if h.ops[w].del {
				kw.dels = append(kw.dels, w)
			}
		}
		slices.SortFunc(kw.bySlot, func(a, b int32) int { return cmp.Compare(h.ops[a].slot, h.ops[b].slot) })
		invs := make([]int64, len(kw.bySlot))
		for p, w := range kw.bySlot {
			invs[p] = h.ops[w].inv
		}
		kw.slotInv = newMinTree(invs)
		kw.argmax = make([][]int32, len(kw.lists))
		for j, l := range kw.lists {
			slices.SortStableFunc(l, func(a, b int32) int { return cmpInt(h.ops[a].ret, h.ops[b].ret) })
			am := make([]int32, len(l))
			best := int32(-1)
			for p, w := range l {
				o := &h.ops[w]
				o.wj = int32(j)
				if o.slot != 0 && (best < 0 || o.slot > h.ops[best].slot) {
					best = w
				}
				am[p] = best
			}
			kw.argmax[j] = am
		}
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
