package weakpath

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Floor is what one session has observed of the log; a weak read of the
// session must come from a state that reflects it.
type Floor struct {
	// Committed is the highest committed slot observed: strong results
	// that went through the log, committed weak writes, the applied index
	// of the states weak reads came from.
	Committed uint64
	// Spec is the newest speculative position observed (a fast-path
	// result), zero when none is outstanding.
	Spec wire.Position
	// specCover is the highest sequence number the session had issued when
	// Spec was observed: an operation numbered above it was invoked after,
	// so once it commits its slot covers Spec.
	specCover uint64
	// issued is the highest sequence number the session has issued.
	issued uint64
	// readAfter are other sessions' writes the session read before they
	// were known committed (see wire.Request.ReadAfter).
	readAfter []readDep
}

// readDep is a write a session read on the fast path, with the highest
// sequence number the session had issued then: an operation numbered above
// it that commits is logged after the read, and the read after the write,
// so its slot covers the write.
type readDep struct {
	id    wire.OpID
	cover uint64
}

// Floors holds every session's floor.
type Floors map[uint64]*Floor

func (f Floors) of(session uint64) *Floor {
	fl := f[session]
	if fl == nil {
		fl = &Floor{}
		f[session] = fl
	}
	return fl
}

// Issued notes a new operation of the session, before it is sent.
func (f Floors) Issued(id wire.OpID) {
	fl := f.of(id.Session)
	fl.issued = max(fl.issued, id.Seq)
}

// ObserveState raises the session's committed floor to the applied index of
// a state a weak read came from.
func (f Floors) ObserveState(session, applied uint64) {
	fl := f.of(session)
	fl.Committed = max(fl.Committed, applied)
}

// ObserveCommitted notes that operation id of the session committed at
// slot. An operation invoked after the outstanding speculative position was
// observed is logged after everything that position stands for (a new
// leader replays the old one's fast-path operations before it logs anything
// new), so its slot then covers the position, which is dropped. It is kept
// while the session still names a write it read early: a replica that no
// longer knows that write (its session expired) finds it applied by the
// position (see curpho's readable), and a read completed after the newest
// position was observed may name one the commit does not cover.
func (f Floors) ObserveCommitted(id wire.OpID, slot uint64) {
	fl := f.of(id.Session)
	fl.Committed = max(fl.Committed, slot)
	fl.readAfter = slices.DeleteFunc(fl.readAfter, func(d readDep) bool { return id.Seq > d.cover })
	if id.Seq > fl.specCover && len(fl.readAfter) == 0 {
		fl.Spec = wire.Position{}
	}
}

// ObserveReadDep notes that the session read another session's write
// before it was known committed.
func (f Floors) ObserveReadDep(session uint64, dep wire.OpID) {
	if dep.IsZero() || dep.Session == session {
		return // the session's own writes are the replica's to hold
	}
	fl := f.of(session)
	if !slices.ContainsFunc(fl.readAfter, func(d readDep) bool { return d.id == dep }) {
		fl.readAfter = append(fl.readAfter, readDep{id: dep, cover: fl.issued})
	}
}

// Satisfied notes that a replica served a weak read stamped with ids: it
// had applied them, and its applied index, now the session's committed
// floor, covers them.
func (f Floors) Satisfied(session uint64, ids []wire.OpID) {
	if len(ids) == 0 {
		return
	}
	fl := f.of(session)
	fl.readAfter = slices.DeleteFunc(fl.readAfter, func(d readDep) bool { return slices.Contains(ids, d.id) })
}

// ObserveSpeculative notes a fast-path result at pos. Positions of a later
// term come later: its leader logged every fast-path operation of earlier
// terms before anything of its own.
func (f Floors) ObserveSpeculative(session uint64, pos wire.Position) {
	fl := f.of(session)
	if fl.Spec.Less(pos) {
		fl.Spec, fl.specCover = pos, fl.issued
	}
}

// Stamp sets the session's floor on a weak read.
func (f Floors) Stamp(req *wire.Request) {
	fl := f.of(req.Op.ID.Session)
	req.MinApplied, req.SpecFloor = fl.Committed, fl.Spec
	// A fresh slice: an earlier send of the request may still hold the
	// old one.
	req.ReadAfter = nil
	for _, d := range fl.readAfter {
		req.ReadAfter = append(req.ReadAfter, d.id)
	}
}
