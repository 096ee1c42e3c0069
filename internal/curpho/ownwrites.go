package curpho

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// A weak read is answered from the session's own pooled writes or from the
// applied state, by whichever replica the session is bound to when it
// reads. That need not be the replica that acknowledged the session's
// earlier weak writes (a client rebinds when its replica stops answering),
// and each weak write reaches each replica on its own: a read served where
// one of them has not arrived would miss the session's own write (W1). So
// a read waits until its replica holds every weak write the session issued
// before it that is not applied there. The client re-sends its uncommitted
// weak writes until they commit, so the wait ends.
//
// A session may also have read another session's weak write on the fast
// path before it committed (a strong read's read dependency). The replica
// never answers from other sessions' pooled writes, so the read waits until
// it has applied those (Request.ReadAfter), or it would go back in time
// (W2). They are logged ahead of the strong read that returned them, so
// they commit.
//
// The session table knows an applied write only while its session lives:
// once that session expired, its writes are unknown here for good, and a
// read waiting to see them applied waited for ever. Each was logged ahead
// of the strong read that returned it, and the client keeps a speculative
// floor at or after that read while it names them (weakpath.Floors), so an
// applied state that holds the floor's entry holds them too; where the
// floor was lost, the gate says so and the client asks the leader.

// readable reports whether a weak read may go on to the floor gate: the
// replica holds the session's earlier weak writes and has applied the
// writes it read on the fast path.
func (x *Replica) readable(req *wire.Request) bool {
	return x.readDepsApplied(req) && x.sessionWritesHere(req)
}

// readDepsApplied reports whether the replica has applied the other
// sessions' writes req's session read on the fast path: the session table
// knows them, or the read's speculative floor is settled here.
func (x *Replica) readDepsApplied(req *wire.Request) bool {
	for _, id := range req.ReadAfter {
		if _, outcome := x.Store().Lookup(id); outcome == kvstore.Unknown {
			return x.reads.SpecSettled(x, req)
		}
	}
	return true
}

// sessionWritesHere reports whether this replica holds, pooled or applied,
// every weak write of req's session before req: it follows the chain of
// previous weak writes from req.PrevWeak until one that is applied (the
// leader logs each weak write after its predecessor, so everything before
// an applied one is applied too) or one whose own chain was found here
// before (Record.PrevHere).
//
// A found chain marks the records it went through, so the next read of the
// session stops at the first of them: a read costs the writes the session
// made since the last read that got through, not all of its writes this
// replica has not applied yet. Those can be thousands per session when
// nothing commits for a while (no leader, or a leader busy recovering),
// and every weak read walked all of them.
func (x *Replica) sessionWritesHere(req *wire.Request) bool {
	stop, ok := x.chainEnd(req.Op.ID.Session, req.PrevWeak)
	if !ok {
		return false
	}
	for seq := req.PrevWeak; seq != stop; {
		rec := x.Pool().Get(wire.OpID{Session: req.Op.ID.Session, Seq: seq})
		rec.PrevHere = true
		seq = rec.PrevWeak
	}
	return true
}

// chainEnd follows the session's chain of weak writes down from seq and
// returns where it ends here: 0, a write known to the store (applied or
// forgotten) or the first pooled write already marked PrevHere; ok is false
// when a write of the chain is neither pooled nor known here.
func (x *Replica) chainEnd(session, seq uint64) (stop uint64, ok bool) {
	for seq != 0 {
		x.work.chainSteps++
		id := wire.OpID{Session: session, Seq: seq}
		if _, outcome := x.Store().Lookup(id); outcome != kvstore.Unknown {
			return seq, true
		}
		rec := x.Pool().Get(id)
		if rec == nil {
			return 0, false
		}
		if rec.PrevHere {
			return rec.PrevWeak, true
		}
		seq = rec.PrevWeak
	}
	return 0, true
}

// serveRead hands a weak read to the floor gate once it is readable, and
// parks it until then.
func (x *Replica) serveRead(from wire.NodeID, req *wire.Request) {
	if x.readable(req) {
		x.reads.Serve(x, from, req, x.answer)
		return
	}
	session := req.Op.ID.Session
	parked := x.awaitingWrites[session]
	if slices.ContainsFunc(parked, func(h heldRequest) bool { return h.req.Op.ID == req.Op.ID }) {
		return
	}
	if len(parked) == 0 {
		x.awaitingSessions = append(x.awaitingSessions, session)
	}
	x.awaitingWrites[session] = append(parked, heldRequest{from, req})
	x.awaiting++
}

// releaseWritten passes on the session's parked reads that a write of the
// session, just pooled, made readable. Only the session's own reads are
// looked at: its writes are all a read waits for besides what the replica
// applies (releaseReads).
func (x *Replica) releaseWritten(session uint64) {
	if len(x.awaitingWrites[session]) == 0 {
		return
	}
	x.releaseSession(session)
	if len(x.awaitingWrites[session]) == 0 {
		if i := slices.Index(x.awaitingSessions, session); i >= 0 {
			x.awaitingSessions = slices.Delete(x.awaitingSessions, i, i+1)
		}
	}
}

// releaseSession passes on, in arrival order, the session's parked reads
// that became readable.
func (x *Replica) releaseSession(session uint64) {
	parked := x.awaitingWrites[session]
	if len(parked) == 0 {
		return
	}
	var ready []heldRequest
	kept := parked[:0]
	for _, h := range parked {
		if x.readable(h.req) {
			ready = append(ready, h)
		} else {
			kept = append(kept, h)
		}
	}
	clear(parked[len(kept):])
	x.awaiting -= len(ready)
	if len(kept) == 0 {
		delete(x.awaitingWrites, session)
	} else {
		x.awaitingWrites[session] = kept
	}
	for _, h := range ready {
		x.reads.Serve(x, h.from, h.req, x.answer)
	}
}

// releaseReads passes on the parked reads of every session that became
// readable (the replica applied more), sessions in the order they first
// parked a read, each session's reads in arrival order.
func (x *Replica) releaseReads() {
	if x.awaiting == 0 {
		clear(x.awaitingSessions)
		x.awaitingSessions = x.awaitingSessions[:0]
		return
	}
	sessions := x.awaitingSessions[:0]
	for _, s := range x.awaitingSessions {
		x.releaseSession(s)
		if len(x.awaitingWrites[s]) > 0 {
			sessions = append(sessions, s)
		}
	}
	clear(x.awaitingSessions[len(sessions):])
	x.awaitingSessions = sessions
}
