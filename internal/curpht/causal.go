package curpht

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Floors tracks, per session, the highest slot the session has observed:
// its strong operations' slots, its committed weak writes, the applied
// index of the states its weak reads came from. Everything at or below it
// may be in the session's causal past (strong operations are totally
// ordered), so a weak read must reflect every write up to it.
type Floors map[uint64]uint64

// Observe raises the session's floor to slot.
func (f Floors) Observe(session, slot uint64) {
	if slot > f[session] {
		f[session] = slot
	}
}

// Of returns the session's floor.
func (f Floors) Of(session uint64) uint64 { return f[session] }

// Reads answers weak reads that carry a floor (Request.MinApplied). A read
// can be answered from the applied state once the replica applied up to
// the floor, or earlier, once its log reaches the floor with no write to
// the read's key between what it applied and the floor: the applied value
// of the key is then the value as of the floor. Reads that can be answered
// neither way wait, in arrival order, until they can.
type Reads struct {
	// lastAppended is the highest slot in this replica's log.
	lastAppended uint64
	// writes holds, per key, the slots of logged writes not yet applied.
	writes map[uint64][]uint64
	parked []parkedRead
}

type parkedRead struct {
	from wire.NodeID
	req  *wire.Request
}

// NewReads returns an empty tracker.
func NewReads() *Reads { return &Reads{writes: make(map[uint64][]uint64)} }

// Appended notes an entry added to the log. An index at or below the last
// one means a new leader replaced the log's tail: the replaced writes go.
func (t *Reads) Appended(index uint64, op *wire.Op) {
	if index <= t.lastAppended {
		for k, slots := range t.writes {
			if i := slices.IndexFunc(slots, func(s uint64) bool { return s >= index }); i >= 0 {
				t.writes[k] = slots[:i]
			}
		}
	}
	t.lastAppended = index
	if op.Kind.IsWrite() {
		t.writes[op.Key] = append(t.writes[op.Key], index)
	}
}

// Applied notes an applied entry.
func (t *Reads) Applied(index uint64, op *wire.Op) {
	if !op.Kind.IsWrite() {
		return
	}
	slots := t.writes[op.Key]
	if i := slices.Index(slots, index); i >= 0 {
		slots = slices.Delete(slots, i, i+1)
	}
	if len(slots) == 0 {
		delete(t.writes, op.Key)
	} else {
		t.writes[op.Key] = slots
	}
}

// ready reports whether req can be answered from a state that applied up
// to applied.
func (t *Reads) ready(req *wire.Request, applied uint64) bool {
	floor := req.MinApplied
	if applied >= floor {
		return true
	}
	if t.lastAppended < floor {
		return false
	}
	for _, s := range t.writes[req.Op.Key] {
		if s <= floor {
			return false
		}
	}
	return true
}

// Serve answers req now if it can be, else parks it.
func (t *Reads) Serve(from wire.NodeID, req *wire.Request, applied uint64, answer func(wire.NodeID, *wire.Request)) {
	if t.ready(req, applied) {
		answer(from, req)
		return
	}
	if !slices.ContainsFunc(t.parked, func(r parkedRead) bool { return r.req.Op.ID == req.Op.ID }) {
		t.parked = append(t.parked, parkedRead{from, req})
	}
}

// Release answers, in arrival order, the parked reads that can now be.
func (t *Reads) Release(applied uint64, answer func(wire.NodeID, *wire.Request)) {
	if len(t.parked) == 0 {
		return
	}
	kept := t.parked[:0]
	var ready []parkedRead
	for _, r := range t.parked {
		if t.ready(r.req, applied) {
			ready = append(ready, r)
		} else {
			kept = append(kept, r)
		}
	}
	clear(t.parked[len(kept):])
	t.parked = kept
	for _, r := range ready {
		answer(r.from, r.req)
	}
}
