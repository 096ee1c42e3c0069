package curp

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// A request may name its session's previous weak write (Request.PrevWeak;
// CURP-HO's clients do while that write is not known committed): the
// leader logs it after that write, so the log keeps each session's order.
// Weak writes reach the leader on their own, so a request can arrive
// before the write it names; it is held until that write is logged.
type sessionOrder struct {
	held map[wire.OpID][]Queued // keyed by the weak write they wait for
	// heldSince is the log's clock when the first request was held
	// behind each weak write (see releaseOutlived).
	heldSince map[wire.OpID]uint64
}

func newSessionOrder() sessionOrder {
	return sessionOrder{held: make(map[wire.OpID][]Queued), heldSince: make(map[wire.OpID]uint64)}
}

// ProposeInOrder has the leader log req once its session's previous weak
// write is logged, and then whatever waited for req.
func (r *Replica) ProposeInOrder(from wire.NodeID, req *wire.Request) {
	if r.admit(from, req) {
		r.proposeReleasing(from, req)
	}
}

// admit reports whether req may be logged now, and holds it otherwise.
func (r *Replica) admit(from wire.NodeID, req *wire.Request) bool {
	if req.PrevWeak == 0 {
		return true
	}
	prev := wire.OpID{Session: req.Op.ID.Session, Seq: req.PrevWeak}
	if r.Proposed(prev) || r.Logged(prev) {
		return true
	}
	if _, outcome := r.Store().Lookup(prev); outcome != kvstore.Unknown {
		return true
	}
	r.hold(prev, Queued{from, req})
	return false
}

// hold queues q until prev is logged, once: a client's retry or a stale
// record handed over again replaces the queued request (keeping a client
// to answer), so retries do not pile up behind a write that never comes.
func (r *Replica) hold(prev wire.OpID, q Queued) {
	hs := r.order.held[prev]
	if len(hs) == 0 {
		r.order.heldSince[prev] = r.Store().Clock()
	}
	for i := range hs {
		if hs[i].Req.Op.ID == q.Req.Op.ID {
			if q.From != 0 {
				hs[i] = q
			}
			return
		}
	}
	r.order.held[prev] = append(hs, q)
}

// proposeReleasing logs req and then whatever waited for it.
func (r *Replica) proposeReleasing(from wire.NodeID, req *wire.Request) {
	r.Propose(from, req)
	r.releaseProposed(req.Op.ID)
}

func (r *Replica) releaseProposed(id wire.OpID) {
	waiting, ok := r.order.held[id]
	if !ok {
		return
	}
	delete(r.order.held, id)
	delete(r.order.heldSince, id)
	for _, q := range waiting {
		r.proposeReleasing(q.From, q.Req)
	}
}

// releaseOutlived logs the requests held for a whole expiry behind a weak
// write of a session the state does not know. That write may have been
// applied and its session forgotten since, as outlived explains, and
// nothing would ever log it again: held for good, the session could never
// go on (a client cut off from the leader for longer than the expiry,
// which had not learned that its weak write committed, retried its next
// operations for ever, and the leader held each). Or it was never logged
// within the expiry, and is given up as an outlived record is.
func (r *Replica) releaseOutlived() {
	e := r.SessionExpiry()
	if e == 0 || len(r.order.heldSince) == 0 {
		return
	}
	var due []wire.OpID
	for prev, since := range r.order.heldSince {
		if !r.Store().HasSession(prev.Session) && r.Store().Clock() >= since+e {
			due = append(due, prev)
		}
	}
	// In a fixed order: the log must not depend on the map's.
	slices.SortFunc(due, wire.OpID.Compare)
	for _, prev := range due {
		r.heldOutlived++
		r.releaseProposed(prev)
	}
}

// releaseHeld logs what waited for an operation a previous leader logged,
// now applied here.
func (r *Replica) releaseHeld(id wire.OpID) {
	if !r.IsLeader() {
		// Only a leader holds requests; a deposed one's clients retry
		// with the new leader.
		clear(r.order.held)
		clear(r.order.heldSince)
		return
	}
	r.releaseProposed(id)
}

// heldRequests counts the requests held.
func (r *Replica) heldRequests() int {
	n := 0
	for _, hs := range r.order.held {
		n += len(hs)
	}
	return n
}
