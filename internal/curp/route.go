package curp

import "github.com/hybridkv/hybridkv/internal/wire"

// Route says who serves a client's request next.
type Route uint8

const (
	// RouteDone: the library dealt with it (an applied operation answered,
	// or a request held for the recovery under way; it comes back from
	// TakeRequeued once the recovery ends).
	RouteDone Route = iota
	// RouteWeak: a hybrid protocol's weak path serves it.
	RouteWeak
	// RouteWitness: a strong operation at a follower, to record (Witness).
	RouteWitness
	// RouteLead: a strong operation at the leader, to log (ProposeInOrder).
	RouteLead
)

// Route screens a client's request and says who serves it.
func (r *Replica) Route(from wire.NodeID, req *wire.Request) Route {
	op := &req.Op
	if r.Replica.Applied(op.ID) {
		// An applied operation needs no record: the leader resends its
		// result, a witness acknowledges it.
		if r.IsLeader() {
			r.AnswerApplied(from, req)
		} else {
			r.ReplyAfterWrite(from, &wire.Reply{Kind: wire.ReplyWitness, ID: op.ID, Ok: true,
				Incarnation: r.wit.incarnation})
		}
		return RouteDone
	}
	if r.recovery != nil && !(r.weakPath(op) && (!op.Kind.IsWrite() || broken.logInRecovery)) {
		// Nothing is logged before the replay: a later operation of a
		// session logged first would move the session's floor past a
		// replayed one, which would then count as a forgotten duplicate.
		// Only a hybrid protocol's weak reads, which log nothing, go on.
		r.waiting = append(r.waiting, Queued{from, req})
		return RouteDone
	}
	switch {
	case r.weakPath(op):
		return RouteWeak
	case !r.IsLeader():
		return RouteWitness
	}
	return RouteLead
}

// TakeRequeued hands back the requests that waited for a recovery which
// has ended, or which this replica no longer leads, for the core to route
// again (Route) in this order. A core calls it after each message it
// steps and each event it handles.
func (r *Replica) TakeRequeued() []Queued {
	q := r.requeued
	r.requeued = nil
	return q
}

func (r *Replica) requeueWaiting() {
	r.requeued = append(r.requeued, r.waiting...)
	r.waiting = nil
}

// Witness records req's operation unless a conflicting unapplied operation
// is recorded, or this replica knows of no leader, or it is a transaction
// (which conflicts with every operation, and so is only ever ordered by
// the leader's log) or a scan (whose keys a witness cannot check at a
// glance either), and returns the reply
// to send with ReplyTo; a hybrid protocol may complete an ok one first.
//
// With no leader, no strong operation can complete on the fast path (it
// needs the leader's speculative reply), so a record would only be work for
// the next leader's recovery, whose order costs the pool's strong
// operations times its size: pools that a leaderless spell at 99 % weak
// filled with thousands of strong operations stalled each new leader for
// seconds, and its followers elected another. Refused, the operation takes
// the slow path once there is a leader; the client retries until then.
func (r *Replica) Witness(req *wire.Request) *wire.Reply {
	op := &req.Op
	lead, _ := r.Leader()
	ok := lead != 0 && op.Kind != wire.Scan && (op.Kind != wire.Txn || broken.speculateTxns) && r.conflicting(op) == nil
	if ok {
		r.pool.Add(op, req.PrevWeak)
	}
	return &wire.Reply{Kind: wire.ReplyWitness, ID: op.ID, Ok: ok, Incarnation: r.wit.incarnation}
}

// ReplyTo sends a reply to a strong operation. A read's need not wait for
// the round's write unless it names pooled writes (CURP-HO's dependencies
// and read dependency) whose records are not durable yet: otherwise it
// vouches for no record it could lose, only for the applied state (its
// value), for durable records and for the absence of a conflicting write,
// and the read itself changes nothing a crash could lose. Replaying a lost
// read record in recovery would change nothing either.
func (r *Replica) ReplyTo(to wire.NodeID, op *wire.Op, rep *wire.Reply) {
	if !op.Kind.IsWrite() && r.NamedDurable(op.ID.Session, rep) || broken.repliesBeforeWrite {
		r.ReplyNow(to, rep)
		return
	}
	r.ReplyAfterWrite(to, rep)
}

// NamedDurable reports whether every pooled write rep names is durable
// here: the session's weak writes in Deps, and ReadDep.
func (r *Replica) NamedDurable(session uint64, rep *wire.Reply) bool {
	if broken.namesBeforeDurable {
		return true
	}
	for _, seq := range rep.Deps {
		if !r.pool.Durable(r.pool.Get(wire.OpID{Session: session, Seq: seq})) {
			return false
		}
	}
	return rep.ReadDep.IsZero() || r.pool.Durable(r.pool.Get(rep.ReadDep))
}
