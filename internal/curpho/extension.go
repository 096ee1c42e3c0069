package curpho

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/readgate"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Extension is CURP-HO's extension of a CURP replica. It holds the leader's
// operations waiting for their session's previous weak write to be logged.
type Extension struct {
	held map[wire.OpID][]heldRequest // keyed by the weak write they wait for
	// awaitingWrites are weak reads waiting for their session's earlier
	// weak writes to arrive (see sessionWritesHere), by session, each
	// session's in arrival order; awaitingSessions lists the sessions that
	// have some, in the order they parked their first, and awaiting counts
	// them all.
	awaitingWrites   map[uint64][]heldRequest
	awaitingSessions []uint64
	awaiting         int
	// readableAt is the applied index awaitingWrites was last looked at.
	readableAt uint64
	// reads answers weak reads once the replica reflects their floor.
	reads *readgate.Gate
	work  work
}

// work counts the pooled records weak reads looked at, for tests that
// bound a weak read's work: chainSteps along the session's chain of weak
// writes (sessionWritesHere), ownWriteSteps among the writes on the read's
// key (latestOwnWrite).
type work struct {
	chainSteps, ownWriteSteps uint64
}

type heldRequest struct {
	from wire.NodeID
	req  *wire.Request
}

var _ curp.Extension = (*Extension)(nil)

// NewExtension returns the extension for one replica.
func NewExtension() *Extension {
	return &Extension{held: make(map[wire.OpID][]heldRequest), reads: readgate.New(),
		awaitingWrites: make(map[uint64][]heldRequest)}
}

// Weak pools a weak write everywhere, acknowledges it from the bound
// replica and logs it on the leader; the bound replica answers weak reads.
func (x *Extension) Weak(r *curp.Replica, from wire.NodeID, req *wire.Request) {
	op := &req.Op
	if !op.Kind.IsWrite() {
		if req.Flags&wire.FlagReplyWanted != 0 {
			x.serveRead(r, from, req)
		}
		return
	}
	r.Pool().Add(op, req.PrevWeak)
	x.releaseWritten(r, op.ID.Session)
	if req.Flags&wire.FlagReplyWanted != 0 {
		r.ReplyAfterWrite(from, &wire.Reply{Kind: wire.ReplyWeak, ID: op.ID, Ok: true})
	}
	if r.IsLeader() && x.Admit(r, from, req) {
		x.propose(r, from, req)
	}
}

// weakRead answers from the session's latest pooled earlier weak write on
// the key, else from the applied state. ReadDep names the pooled write it returned.
func (x *Extension) weakRead(r *curp.Replica, op *wire.Op) *wire.Reply {
	// Only weak writes the session issued before the read. A later write
	// is not in the read's causal past. A pending strong write is not
	// ordered with the session's weak writes (PrevWeak chains weak writes
	// only): reading it would make a later weak write depend on it while
	// the leader may log them the other way round.
	own := latestOwnWrite(r.Pool(), op, &x.work)
	st := r.Store()
	rep := &wire.Reply{Kind: wire.ReplyWeak, ID: op.ID, Ok: true, Applied: st.Applied()}
	if own != nil {
		rep.Found, rep.Value, rep.ReadDep = true, own.Op.Value, own.Op.ID
		return rep
	}
	v, found := st.Read(op.Key)
	rep.Found, rep.Value, rep.Slot = found, v.Value, v.Slot
	return rep
}

// latestOwnWrite returns the session's newest pooled weak write on op's
// key issued before op, by the session's order: the leader logs them in
// that order, so it is the one the read must see. Not by arrival: a write
// re-sent after a timeout reaches a replica after the session's next one.
func latestOwnWrite(pool *witness.Pool, op *wire.Op, work *work) *witness.Record {
	var own *witness.Record
	pool.SessionKey(op.ID.Session, op.Key, func(rec *witness.Record) {
		work.ownWriteSteps++
		if id := rec.Op.ID; id.Seq < op.ID.Seq && isWeakWrite(rec) &&
			(own == nil || id.Seq > own.Op.ID.Seq) {
			own = rec
		}
	})
	return own
}

// Admit holds a request back until the session's previous weak write is
// logged, so the log keeps each session's order.
func (x *Extension) Admit(r *curp.Replica, from wire.NodeID, req *wire.Request) bool {
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
	x.hold(prev, heldRequest{from, req})
	return false
}

// hold queues h until prev is logged, once: a client's retry or a stale
// record handed over again replaces the queued request (keeping a client
// to answer), so retries do not pile up behind a write that never comes.
func (x *Extension) hold(prev wire.OpID, h heldRequest) {
	hs := x.held[prev]
	for i := range hs {
		if hs[i].req.Op.ID == h.req.Op.ID {
			if h.from != 0 {
				hs[i] = h
			}
			return
		}
	}
	x.held[prev] = append(hs, h)
}

// propose logs req and then whatever waited for it.
func (x *Extension) propose(r *curp.Replica, from wire.NodeID, req *wire.Request) {
	r.Propose(from, req)
	waiting := x.held[req.Op.ID]
	delete(x.held, req.Op.ID)
	for _, h := range waiting {
		x.propose(r, h.from, h.req)
	}
}

// Conflicts: only strong operations conflict at witnesses; pooled weak
// writes are reported as dependencies instead.
func (*Extension) Conflicts(rec *witness.Record, _ *wire.Op) bool {
	return rec.Op.Level == wire.Strong
}

// Annotate reports the session's pooled weak writes, the newest of its
// earlier weak writes applied here and, for a read, the latest pooled weak
// write on the key: at a witness the latest to arrive, at the leader the
// latest its log holds ahead of the read, whose value the leader returns.
func (x *Extension) Annotate(r *curp.Replica, op *wire.Op, rep *wire.Reply) {
	r.Pool().Session(op.ID.Session, func(rec *witness.Record) {
		if rec.Op.Level == wire.Weak && rec.Op.Kind.IsWrite() {
			rep.Deps = append(rep.Deps, rec.Op.ID.Seq)
		}
	})
	slices.Sort(rep.Deps)
	rep.DepsApplied = appliedDep(r, op.ID)
	if op.Kind.IsWrite() {
		return
	}
	if rep.Kind != wire.ReplySpeculative {
		if dep := r.Pool().Latest(op.Key, isWeakWrite); dep != nil {
			rep.ReadDep = x.witnessedDep(r, dep)
		}
		return
	}
	// Arrival order is not log order: a weak write held back for its
	// session's previous one is logged after writes that arrived later.
	// Writes pooled but not logged yet will be logged after the read.
	if dep := lastLogged(r, op.Key); dep != nil {
		rep.ReadDep = dep.Op.ID
		rep.Found, rep.Value = true, dep.Op.Value
	}
}

// witnessedDep is the read dependency a witness names for a read whose
// latest pooled weak write on the key is dep. The leader logs dep only
// after its session's earlier weak writes, so a new leader's replay can
// log it only once it has them; a witness that lacks one of them (pooled
// or applied) names no usable dependency, so the read cannot complete on
// the fast path with it: were it to, a recovery from witnesses that lack
// that earlier write would hold dep back for it and replay the read, which
// returned dep's value, before dep. Its session's id with sequence 0 never
// matches the leader's dependency, nor the absence of one.
func (x *Extension) witnessedDep(r *curp.Replica, dep *witness.Record) wire.OpID {
	if _, ok := x.chainEnd(r, dep.Op.ID.Session, dep.PrevWeak); !ok {
		return wire.OpID{Session: dep.Op.ID.Session}
	}
	return dep.Op.ID
}

// lastLogged returns, on the leader, the pooled weak write on key that its
// log holds at the highest index, or nil. The leader's pool holds every
// unapplied entry of its log, so no later write on the key is missed.
func lastLogged(r *curp.Replica, key uint64) *witness.Record {
	var last *witness.Record
	var lastAt uint64
	r.Pool().Key(key, func(rec *witness.Record) {
		if !isWeakWrite(rec) {
			return
		}
		if at, ok := r.LoggedAt(rec.Op.ID); ok && at > lastAt {
			last, lastAt = rec, at
		}
	})
	return last
}

// appliedDep follows the chain of weak writes before the pooled operation
// id, through the pooled ones, to the first this replica has applied, and
// returns its sequence number (0 if the chain ends first). A replica may
// apply a session's weak write before its client learns it committed (a
// follower learns commits from its peers, the client from the leader); its
// record has then left the pool, but the write is committed, which is all
// a fast path needs of it. The leader logs each weak write after the
// previous one, so every earlier weak write of the session is applied too.
func appliedDep(r *curp.Replica, id wire.OpID) uint64 {
	rec := r.Pool().Get(id)
	if rec == nil {
		return 0
	}
	// Sequence numbers fall along the chain; a request naming a later one
	// is not followed.
	for seq := rec.PrevWeak; seq != 0 && seq < rec.Op.ID.Seq; seq = rec.PrevWeak {
		prev := wire.OpID{Session: id.Session, Seq: seq}
		if _, outcome := r.Store().Lookup(prev); outcome == kvstore.Applied {
			return seq
		}
		if rec = r.Pool().Get(prev); rec == nil {
			return 0
		}
	}
	return 0
}

func isWeakWrite(rec *witness.Record) bool {
	return rec.Op.Level == wire.Weak && rec.Op.Kind.IsWrite()
}

// Applied notes the entry for the weak reads' gate and releases what
// waited for an operation a previous leader logged.
func (x *Extension) Applied(r *curp.Replica, index uint64, req *wire.Request, _ kvstore.Result) {
	x.reads.Applied(index, &req.Op)
	if !r.IsLeader() {
		// Only a leader holds requests; a deposed one's clients retry
		// with the new leader.
		clear(x.held)
		return
	}
	waiting, ok := x.held[req.Op.ID]
	if !ok {
		return
	}
	delete(x.held, req.Op.ID)
	for _, h := range waiting {
		x.propose(r, h.from, h.req)
	}
}

func (x *Extension) answerer(r *curp.Replica) func(wire.NodeID, *wire.Request, readgate.Verdict) {
	return func(from wire.NodeID, req *wire.Request, v readgate.Verdict) {
		if v == readgate.Lost {
			r.ReplyAfterWrite(from, wire.LostReply(req.Op.ID))
			return
		}
		rep := x.weakRead(r, &req.Op)
		if rep.ReadDep.IsZero() {
			// From the applied state, which holds only committed entries
			// (durable on a majority, and here before they were applied):
			// nothing the round's write is for. Waiting for it had every
			// weak read pay a sync under load (95 % weak: weak-read
			// median 14.5 ms with fsync, 5.7 ms without).
			r.ReplyNow(from, rep)
			return
		}
		// The session's own pooled write: durable here only with the
		// round's write.
		r.ReplyAfterWrite(from, rep)
	}
}

// Appended notes the entry for the weak reads' gate.
func (x *Extension) Appended(_ *curp.Replica, index uint64, req *wire.Request) {
	x.reads.Appended(index, &req.Op)
}

// Settled answers the weak reads that the round's entries let go: those
// whose session's writes are now applied, and those whose floor the log
// reached. Once a round, since each release looks at every waiting read.
func (x *Extension) Settled(r *curp.Replica) {
	if applied := r.Store().Applied(); applied != x.readableAt {
		x.readableAt = applied
		x.releaseReads(r)
	}
	x.reads.Release(r, x.answerer(r))
}

// LeaderPools implements curp.Extension: a CURP-HO leader pools a weak
// write when it arrives, before it can log it.
func (*Extension) LeaderPools() bool { return true }

// ReadsShowPool implements curp.Extension: a read learns the pooled weak
// write it depends on, which must be durable before the read is answered.
func (*Extension) ReadsShowPool() bool { return true }

// Metrics implements curp.Extension.
func (x *Extension) Metrics() []protocol.Measure {
	held := 0
	for _, hs := range x.held {
		held += len(hs)
	}
	return []protocol.Measure{
		readgate.ParkedReads(x.reads.Parked() + x.awaiting),
		{Name: MetricHeldRequests, Value: float64(held),
			Help: "Requests a CURP-HO leader holds until their session's previous weak write is logged."},
	}
}

// MetricHeldRequests names the requests a leader holds for their
// session's previous weak write (see protocol.Measure).
const MetricHeldRequests = "curp_held_requests"
