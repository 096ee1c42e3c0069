package curpho

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/curp"
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

// readable reports whether a weak read may go on to the floor gate: the
// replica holds the session's earlier weak writes and has applied the
// writes it read on the fast path.
func readable(r *curp.Replica, req *wire.Request) bool {
	for _, id := range req.ReadAfter {
		if _, outcome := r.Store().Lookup(id); outcome == kvstore.Unknown {
			return false
		}
	}
	return sessionWritesHere(r, req)
}

// sessionWritesHere reports whether this replica holds, pooled or applied,
// every weak write of req's session before req: it follows the chain of
// previous weak writes from req.PrevWeak until one that is applied (the
// leader logs each weak write after its predecessor, so everything before
// an applied one is applied too).
func sessionWritesHere(r *curp.Replica, req *wire.Request) bool {
	return chainHere(r, req.Op.ID.Session, req.PrevWeak)
}

// chainHere reports whether this replica holds, pooled or applied, weak
// write prev of session and every one before it, following the chain of
// previous weak writes until one that is applied.
func chainHere(r *curp.Replica, session, prev uint64) bool {
	for seq := prev; seq != 0; {
		id := wire.OpID{Session: session, Seq: seq}
		if _, outcome := r.Store().Lookup(id); outcome != kvstore.Unknown {
			return true
		}
		rec := r.Pool().Get(id)
		if rec == nil {
			return false
		}
		seq = rec.PrevWeak
	}
	return true
}

// serveRead hands a weak read to the floor gate once it is readable, and
// parks it until then.
func (x *Replica) serveRead(r *curp.Replica, from wire.NodeID, req *wire.Request) {
	if readable(r, req) {
		x.reads.Serve(r, from, req, answerer(r))
		return
	}
	if !slices.ContainsFunc(x.awaitingWrites, func(h heldRequest) bool { return h.req.Op.ID == req.Op.ID }) {
		x.awaitingWrites = append(x.awaitingWrites, heldRequest{from, req})
	}
}

// releaseReads passes on, in arrival order, the parked reads that became
// readable.
func (x *Replica) releaseReads(r *curp.Replica) {
	if len(x.awaitingWrites) == 0 {
		return
	}
	var ready []heldRequest
	kept := x.awaitingWrites[:0]
	for _, h := range x.awaitingWrites {
		if readable(r, h.req) {
			ready = append(ready, h)
		} else {
			kept = append(kept, h)
		}
	}
	clear(x.awaitingWrites[len(kept):])
	x.awaitingWrites = kept
	for _, h := range ready {
		x.reads.Serve(r, h.from, h.req, answerer(r))
	}
}
