package curpht

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Floors tracks, per session, the highest slot the session has observed:
// its strong operations' slots, its committed weak writes, the applied
// index of the states its weak reads came from. Everything at or below it
// may be in the session's causal past (strong operations are totally
// ordered), so a weak read must come from a state that applied that far.
type Floors map[uint64]uint64

// Observe raises the session's floor to slot.
func (f Floors) Observe(session, slot uint64) {
	if slot > f[session] {
		f[session] = slot
	}
}

// Of returns the session's floor.
func (f Floors) Of(session uint64) uint64 { return f[session] }

// Parked holds weak reads that asked for a state this replica has not
// applied yet (Request.MinApplied); they are answered, in arrival order,
// once the replica catches up.
type Parked struct {
	reads []parkedRead
}

type parkedRead struct {
	from wire.NodeID
	req  *wire.Request
}

// Park keeps a read for later, once per operation.
func (p *Parked) Park(from wire.NodeID, req *wire.Request) {
	if !slices.ContainsFunc(p.reads, func(r parkedRead) bool { return r.req.Op.ID == req.Op.ID }) {
		p.reads = append(p.reads, parkedRead{from, req})
	}
}

// Release answers, with answer, every parked read the applied index now
// satisfies.
func (p *Parked) Release(applied uint64, answer func(from wire.NodeID, req *wire.Request)) {
	if len(p.reads) == 0 {
		return
	}
	kept := p.reads[:0]
	var ready []parkedRead
	for _, r := range p.reads {
		if r.req.MinApplied <= applied {
			ready = append(ready, r)
		} else {
			kept = append(kept, r)
		}
	}
	clear(p.reads[len(kept):])
	p.reads = kept
	for _, r := range ready {
		answer(r.from, r.req)
	}
}
