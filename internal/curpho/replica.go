package curpho

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/readgate"
	"github.com/hybridkv/hybridkv/internal/smr"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Replica is a CURP-HO replica core: a CURP replica that pools weak writes
// everywhere, answers weak reads at the bound replica, and names the
// session's pooled weak writes in its replies to strong operations.
type Replica struct {
	*curp.Replica
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

// weakPath is what the CURP library is told of CURP-HO's weak path: the
// leader pools weak writes as they arrive, before it can log them; pooled
// weak writes are reported as dependencies, not conflicts (a strong read's
// reply that names them waits for their records to be durable: see
// curp.Replica.ReplyTo); and weak reads look up their session's pooled
// writes on their key.
var weakPath = curp.WeakPath{Serve: true, LeaderPools: true, WeakWritesAreDeps: true, OwnWritesByKey: true}

// NewReplica builds a CURP-HO replica core.
func NewReplica(cfg coreconfig.Config, opts curp.Options) (*Replica, error) {
	opts.WeakPath = weakPath
	base, err := curp.NewReplica(cfg, opts)
	if err != nil {
		return nil, err
	}
	x := &Replica{Replica: base, reads: readgate.New(), awaitingWrites: make(map[uint64][]heldRequest)}
	// Entries logged before a restart and not applied yet are appended
	// as far as the gate is concerned.
	base.EachUnapplied(func(index uint64, req *wire.Request) { x.reads.Appended(index, &req.Op) })
	return x, nil
}

// Step implements protocol.Replica.
func (x *Replica) Step(from wire.NodeID, m wire.Message) {
	if req, ok := m.(*wire.Request); ok && from.IsClient() {
		x.request(from, req)
	} else {
		x.Deliver(from, m)
	}
	for _, q := range x.TakeRequeued() {
		x.request(q.From, q.Req)
	}
}

func (x *Replica) request(from wire.NodeID, req *wire.Request) {
	switch x.Route(from, req) {
	case curp.RouteWeak:
		x.weak(from, req)
	case curp.RouteWitness:
		rep := x.Witness(req)
		if rep.Ok {
			x.annotate(&req.Op, rep)
		}
		x.ReplyTo(from, &req.Op, rep)
	case curp.RouteLead:
		x.ProposeInOrder(from, req)
	}
}

// weak pools a weak write everywhere, acknowledges it from the bound
// replica and logs it on the leader; the bound replica answers weak reads.
func (x *Replica) weak(from wire.NodeID, req *wire.Request) {
	op := &req.Op
	if !op.Kind.IsWrite() {
		if req.Flags&wire.FlagReplyWanted != 0 {
			x.serveRead(from, req)
		}
		return
	}
	x.Pool().Add(op, req.PrevWeak)
	x.releaseWritten(op.ID.Session)
	if req.Flags&wire.FlagReplyWanted != 0 {
		x.ReplyAfterWrite(from, &wire.Reply{Kind: wire.ReplyWeak, ID: op.ID, Ok: true})
	}
	if x.IsLeader() {
		x.ProposeInOrder(from, req)
	}
}

// weakRead answers from the session's latest pooled earlier weak write on
// the key, else from the applied state. ReadDep names the pooled write it returned.
func (x *Replica) weakRead(op *wire.Op) *wire.Reply {
	// Only weak writes the session issued before the read. A later write
	// is not in the read's causal past. A pending strong write is not
	// ordered with the session's weak writes (PrevWeak chains weak writes
	// only): reading it would make a later weak write depend on it while
	// the leader may log them the other way round.
	if op.Kind == wire.Scan {
		return x.weakScan(op)
	}
	own := latestOwnWrite(x.Pool(), op, &x.work)
	st := x.Store()
	rep := &wire.Reply{Kind: wire.ReplyWeak, ID: op.ID, Ok: true, Applied: st.Applied()}
	if own != nil {
		rep.Found, rep.Value = readOf(&own.Op)
		rep.ReadDep = own.Op.ID
		return rep
	}
	v, found := st.Read(op.Key)
	rep.Found, rep.Value, rep.Slot, rep.Revision = found, v.Value, v.Slot, v.Revision()
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

// annotate completes an ok witness reply or the leader's ok speculative
// reply to a strong operation. It reports the session's pooled weak writes, the newest of its
// earlier weak writes applied here and, for a read, the latest pooled weak
// write on the key: at a witness the latest to arrive, at the leader the
// latest its log holds ahead of the read, whose value the leader returns.
func (x *Replica) annotate(op *wire.Op, rep *wire.Reply) {
	x.Pool().Session(op.ID.Session, func(rec *witness.Record) {
		if rec.Op.Level == wire.Weak && rec.Op.Kind.IsWrite() {
			rep.Deps = append(rep.Deps, rec.Op.ID.Seq)
		}
	})
	slices.Sort(rep.Deps)
	rep.DepsApplied = x.appliedDep(op.ID)
	if op.Kind.IsWrite() {
		return
	}
	if rep.Kind != wire.ReplySpeculative {
		if dep := x.Pool().Latest(op.Key, isWeakWrite); dep != nil {
			rep.ReadDep = x.witnessedDep(dep)
		}
		return
	}
	// Arrival order is not log order: a weak write held back for its
	// session's previous one is logged after writes that arrived later.
	// Writes pooled but not logged yet will be logged after the read.
	if dep := x.lastLogged(op.Key); dep != nil {
		rep.ReadDep = dep.Op.ID
		rep.Found, rep.Value = readOf(&dep.Op)
	}
}

// readOf is what a read finds once the write w took effect: its value
// after a put, nothing after a delete. A read answered from a pooled write
// must say so, or a read after a weak delete would return the value it
// removed.
func readOf(w *wire.Op) (found bool, value []byte) {
	if w.Kind == wire.Delete {
		return false, nil
	}
	return true, w.Value
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
func (x *Replica) witnessedDep(dep *witness.Record) wire.OpID {
	if _, ok := x.chainEnd(dep.Op.ID.Session, dep.PrevWeak); !ok {
		return wire.OpID{Session: dep.Op.ID.Session}
	}
	return dep.Op.ID
}

// lastLogged returns, on the leader, the pooled weak write on key that its
// log holds at the highest index, or nil. The leader's pool holds every
// unapplied entry of its log, so no later write on the key is missed.
func (x *Replica) lastLogged(key string) *witness.Record {
	var last *witness.Record
	var lastAt uint64
	x.Pool().Key(key, func(rec *witness.Record) {
		if !isWeakWrite(rec) {
			return
		}
		if at, ok := x.LoggedAt(rec.Op.ID); ok && at > lastAt {
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
func (x *Replica) appliedDep(id wire.OpID) uint64 {
	rec := x.Pool().Get(id)
	if rec == nil {
		return 0
	}
	// Sequence numbers fall along the chain; a request naming a later one
	// is not followed.
	for seq := rec.PrevWeak; seq != 0 && seq < rec.Op.ID.Seq; seq = rec.PrevWeak {
		prev := wire.OpID{Session: id.Session, Seq: seq}
		if _, outcome := x.Store().Lookup(prev); outcome == kvstore.Applied {
			return seq
		}
		if rec = x.Pool().Get(prev); rec == nil {
			return 0
		}
	}
	return 0
}

func isWeakWrite(rec *witness.Record) bool {
	return rec.Op.Level == wire.Weak && rec.Op.Kind.IsWrite()
}

// answer answers a weak read the gate let go.
func (x *Replica) answer(from wire.NodeID, req *wire.Request, v readgate.Verdict) {
	if v == readgate.Lost {
		x.ReplyAfterWrite(from, wire.LostReply(req.Op.ID))
		return
	}
	rep := x.weakRead(&req.Op)
	if x.NamedDurable(req.Op.ID.Session, rep) {
		// From the applied state, which holds only committed entries
		// (durable on a majority, and here before they were applied), or
		// from the session's own pooled write once an earlier round's
		// write made it durable: nothing the round's write is for.
		// Waiting for it had every weak read pay a sync under load (95 %
		// weak: weak-read median 14.5 ms with fsync, 5.7 ms without).
		x.ReplyNow(from, rep)
		return
	}
	// The session's own pooled write, not durable here until this
	// round's write.
	x.ReplyAfterWrite(from, rep)
}

// Ready implements protocol.Replica: CURP's round, with the leader's ok
// speculative replies annotated and the gate told of every entry appended
// and applied. Settled answers the weak reads that the round's entries let
// go: those whose session's writes are now applied, and those whose floor
// the log reached. Once a round, since each release looks at every
// waiting read.
func (x *Replica) Ready() protocol.Ready {
	x.Begin()
	for ev := x.Next(); ev.Kind != smr.Done; ev = x.Next() {
		if spec := x.Handle(ev); spec.Reply != nil {
			if spec.Reply.Ok {
				x.annotate(spec.Op, spec.Reply)
			}
			x.ReplyTo(spec.To, spec.Op, spec.Reply)
		}
		switch ev.Kind {
		case smr.Appended:
			x.reads.Appended(ev.Index, &ev.Req.Op)
		case smr.Applied:
			x.reads.Applied(ev.Index, &ev.Req.Op)
		case smr.Settled:
			x.settled()
		}
		for _, q := range x.TakeRequeued() {
			x.request(q.From, q.Req)
		}
	}
	return x.Output()
}

func (x *Replica) settled() {
	if applied := x.Store().Applied(); applied != x.readableAt {
		x.readableAt = applied
		x.releaseReads()
	}
	x.reads.Release(x, x.answer)
}

// Metrics implements protocol.Replica.
func (x *Replica) Metrics() protocol.Metrics {
	m := x.Replica.Metrics()
	m.Own = append(m.Own, readgate.ParkedReads(x.reads.Parked()+x.awaiting))
	return m
}
