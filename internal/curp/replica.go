package curp

import (
	"fmt"
	"log/slog"

	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/smr"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Options tune a replica beyond the common configuration.
type Options struct {
	// MaxBatch flushes a proposal batch early once it holds this many ops.
	MaxBatch int
	// CompactEvery, CompactKeep and MemoryKeep tune log compaction (see
	// smr.Options).
	CompactEvery, CompactKeep, MemoryKeep uint64
	// RecoveryRetryTicks is how often a recovering leader re-asks the
	// witnesses that have not answered.
	RecoveryRetryTicks int
	// StaleRecordTicks is how long a witness record may wait for its
	// operation to apply before the leader is asked to log it (see
	// sweepStale); 0 means defaultStaleRecordTicks.
	StaleRecordTicks int
	// WeakPath says what a hybrid protocol built on this replica does with
	// weak operations; the zero value is plain CURP, which serves them as
	// strong ones.
	WeakPath WeakPath
	Logger   *slog.Logger
}

// WeakPath is what the CURP library needs to know of a hybrid protocol's
// weak path. The hybrid's own core serves weak operations: the library
// hands them back (RouteWeak) and never calls into the hybrid.
type WeakPath struct {
	// Serve is set by every hybrid protocol: weak operations take its
	// weak path, not CURP's strong one.
	Serve bool
	// LeaderPools says the leader pools operations before it logs them
	// (CURP-HO's weak writes); if not, the leader's records are kept by
	// its raft log rather than the witness log (witness.Log).
	LeaderPools bool
	// WeakWritesAreDeps says pooled weak writes do not conflict with a
	// strong operation on their key: the hybrid reports them as the
	// operation's dependencies instead (CURP-HO). If not, every pooled
	// write conflicts, so a strong read behind a pending weak write waits
	// for it (CURP-HT).
	WeakWritesAreDeps bool
	// OwnWritesByKey says the hybrid looks up a session's pooled writes on
	// a key (CURP-HO's weak reads answer from them): the pool indexes them
	// so (witness.Pool.IndexSessionKeys).
	OwnWritesByKey bool
}

// Replica is a CURP replica core: the shared replicated state machine plus
// witnesses, speculative replies and recovery.
type Replica struct {
	*smr.Replica
	weak WeakPath
	// pool holds witness records on a follower and the appended but
	// unapplied operations on the leader.
	pool       *witness.Pool
	retryTicks int
	recovery   *recovery
	waiting    []Queued // requests that arrived during recovery
	// requeued are requests that waited and must be routed again by the
	// core (see TakeRequeued).
	requeued []Queued
	// order holds the leader's requests back until their session's
	// previous weak write is logged.
	order sessionOrder
	wit   witnesses
	// records makes the pool durable; nil keeps it in memory only.
	records witness.Log
	// recordsInLog is set when this replica, leading, pools what it logs
	// without adding it to records: its raft log keeps those records.
	recordsInLog bool
	// keepFirst asks the round's write to sync the records kept since the
	// last round (keepReplaced) before the raft log's write that drops
	// their entries.
	keepFirst bool
	// forgotBelow is, per session with pooled records, the floor up to
	// which its records were dropped (see forgetAcked).
	forgotBelow map[uint64]uint64
	// staleTicks, sinceSweep: see sweepStale. staleForwarded counts the
	// stale records sent to the leader, staleLogged those the leader
	// logged, staleOutlived those given up as possibly outliving their
	// operation (see outlived); heldOutlived counts the weak writes the
	// leader stopped holding requests behind (releaseOutlived).
	staleTicks, sinceSweep                                   int
	staleForwarded, staleLogged, staleOutlived, heldOutlived uint64
}

// Queued is a client's request that waited, with the client to answer.
type Queued struct {
	From wire.NodeID
	Req  *wire.Request
}

// NewReplica builds a CURP replica core.
func NewReplica(cfg coreconfig.Config, opts Options) (*Replica, error) {
	base, err := smr.New(cfg, smr.Options{MaxBatch: opts.MaxBatch, Logger: opts.Logger,
		CompactEvery: opts.CompactEvery, CompactKeep: opts.CompactKeep, MemoryKeep: opts.MemoryKeep})
	if err != nil {
		return nil, err
	}
	r := &Replica{Replica: base, weak: opts.WeakPath, pool: witness.New(), forgotBelow: make(map[uint64]uint64),
		retryTicks: max(1, opts.RecoveryRetryTicks), records: cfg.Records, order: newSessionOrder(),
		recordsInLog: cfg.Records != nil && !opts.WeakPath.LeaderPools,
		// A restarted witness is complete if its records survived.
		wit: newWitnesses(cfg.Rand.Uint64(), !base.Restarted() || cfg.Records != nil || broken.trustRestarted)}
	if opts.WeakPath.OwnWritesByKey {
		r.pool.IndexSessionKeys()
	}
	r.pool.SetClock(base.Store().Clock()) // loaded records are not applied in this state
	if err := r.loadRecords(); err != nil {
		return nil, fmt.Errorf("replica %d: witness records: %w", cfg.ID, err)
	}
	r.pool.EndRound() // what was loaded is durable
	if opts.RecoveryRetryTicks <= 0 {
		r.retryTicks = 10
	}
	r.staleTicks = opts.StaleRecordTicks
	if r.staleTicks <= 0 {
		r.staleTicks = defaultStaleRecordTicks
	}
	// Entries logged before a restart and not applied yet are appended
	// as far as the protocol is concerned.
	base.EachUnapplied(func(index uint64, req *wire.Request) { r.appended(index, req) })
	return r, nil
}

// Pool exposes the witness pool to the hybrid protocols.
func (r *Replica) Pool() *witness.Pool { return r.pool }

// Step implements protocol.Replica: plain CURP's core. A hybrid protocol's
// core steps the library itself (Route, Deliver, TakeRequeued).
func (r *Replica) Step(from wire.NodeID, m wire.Message) {
	if req, ok := m.(*wire.Request); ok && from.IsClient() {
		r.request(from, req)
	} else {
		r.Deliver(from, m)
	}
	r.routeRequeued()
}

// request routes a client's request the way plain CURP does.
func (r *Replica) request(from wire.NodeID, req *wire.Request) {
	switch r.Route(from, req) {
	case RouteWitness:
		r.ReplyTo(from, &req.Op, r.Witness(req))
	case RouteLead:
		r.ProposeInOrder(from, req)
	}
}

func (r *Replica) routeRequeued() {
	for _, q := range r.TakeRequeued() {
		r.request(q.From, q.Req)
	}
}

// Deliver consumes a message other than a client's request: raft's, a
// peer's stale record, and the recovery's and witness syncs' messages.
func (r *Replica) Deliver(from wire.NodeID, m wire.Message) {
	switch m := m.(type) {
	case *wire.Raft:
		r.StepRaft(from, m)
	case *wire.StaleRecord:
		r.collect(m)
	case *wire.Recover:
		r.onRecover(from, m)
	case *wire.RecoverReply:
		if r.recovery != nil {
			r.recovery.onReply(r, from, m)
		}
	case *wire.WitnessSync:
		r.onWitnessSync(from, m)
	case *wire.WitnessSyncReply:
		r.onWitnessSyncReply(m)
	}
}

// Ready implements protocol.Replica: plain CURP's round. A hybrid
// protocol's core runs its own, handing each event to Handle first.
func (r *Replica) Ready() protocol.Ready {
	r.Begin()
	for ev := r.Next(); ev.Kind != smr.Done; ev = r.Next() {
		if spec := r.Handle(ev); spec.Reply != nil {
			r.ReplyTo(spec.To, spec.Op, spec.Reply)
		}
		r.routeRequeued()
	}
	return r.Output()
}

// Speculative is the leader's speculative reply to a strong operation it
// appended, not sent yet: a hybrid protocol completes an ok one (CURP-HO
// names dependencies in it) before the core sends it with ReplyTo.
type Speculative struct {
	To    wire.NodeID
	Op    *wire.Op
	Reply *wire.Reply // nil if there is nothing to send
}

// Handle does CURP's part of one event of the round.
func (r *Replica) Handle(ev smr.Event) Speculative {
	switch ev.Kind {
	case smr.Appended:
		return r.appended(ev.Index, ev.Req)
	case smr.Replaced:
		r.keepReplaced(ev.Index)
	case smr.Applied:
		r.appliedEntry(ev.Req, ev.Reply)
	case smr.Restored:
		r.restored()
	case smr.LeaderChanged:
		r.leaderChanged(ev.Leading)
	case smr.Compacting:
		r.compacting()
	}
	return Speculative{}
}

func (r *Replica) appliedEntry(req *wire.Request, reply *wire.Reply) {
	r.pool.Remove(req.Op.ID)
	r.forgetAcked(req.Op.ID.Session)
	if reply != nil && r.weakPath(&req.Op) {
		reply.Kind = wire.ReplyWeak
	}
	r.releaseHeld(req.Op.ID)
}

func (r *Replica) leaderChanged(leading bool) {
	r.wit.reset()
	if leading {
		// The pool of a leader holds what its log holds unapplied, so that
		// a speculative reply sees the pending writes it must not run
		// ahead of. Entries of earlier terms are in the log but were never
		// appended by this leader: without them a new leader answered a
		// read from an applied state that lacked a committed write
		// (TestNewLeaderDoesNotReadAheadOfItsLog).
		r.EachUnapplied(func(_ uint64, req *wire.Request) { r.pool.Add(&req.Op, req.PrevWeak) })
		if r.recordsInLog {
			_, term := r.Leader()
			r.records.Lead(term)
		}
		r.startRecovery()
		return
	}
	r.recovery = nil
	r.requeueWaiting() // to be served as a witness now
}

// restored drops records of operations the snapshot already holds, and
// those that may have outlived their operation (see outlived): the
// snapshot may hold it applied and its session forgotten since.
func (r *Replica) restored() {
	var applied []wire.OpID
	r.pool.Each(func(rec *witness.Record) {
		switch {
		case r.Replica.Applied(rec.Op.ID):
			applied = append(applied, rec.Op.ID)
		case r.outlived(rec.Op.ID.Session, rec.PooledAt):
			applied = append(applied, rec.Op.ID)
			r.staleOutlived++
		}
	})
	for _, id := range applied {
		r.pool.Remove(id)
	}
	if r.records != nil {
		// The witness log goes with the state it was written against:
		// see Compacting. The rewrite takes the records the log's entries
		// kept too.
		r.rewriteRecords()
		return
	}
	// The snapshot replaced the log: the records its entries kept go to
	// the witness log.
	r.keepReplaced(0)
}

// compacting rewrites the witness log with the pool before the state is
// snapshotted. The log drops no record when its operation applies (see
// witness.Log): a restart drops the loaded records of operations its
// state says are applied, and the entries it replays drop the rest. But
// a state restored from a snapshot has forgotten the sessions that
// expired before it, and their operations, applied long before, are
// replayed from no entry: their records came back as pending, and a new
// leader's recovery (or the stale sweep) logged them again, old writes
// taking effect a second time over newer ones (a power cut after a few
// compactions lost every write since the first seconds of a run). So
// each snapshot, compaction or one installed from the leader, is
// preceded by a rewrite that leaves the log only the records of
// operations not applied yet; records appended afterwards are of
// operations that arrived after the snapshot's index applied.
func (r *Replica) compacting() {
	if r.records != nil {
		r.rewriteRecords()
	}
}

// Tick implements protocol.Replica.
func (r *Replica) Tick() {
	r.Replica.Tick()
	if r.recovery != nil {
		r.recovery.tick(r)
	}
	r.syncTick()
	r.pool.Tick()
	r.sweepStale()
}

// conflicting returns a pooled record that conflicts with strong op: a
// pending write on its key. A pending read does not hold back a later
// write: the read's result is fixed at its slot, before the write's, and
// replaying a read in recovery changes no state. Reads still wait for
// pending writes, which is what keeps a stale leader's reads honest.
func (r *Replica) conflicting(op *wire.Op) *witness.Record {
	return r.pool.Conflicting(op, func(rec *witness.Record) bool {
		if broken.poolIgnoresTxns && rec.Op.Kind == wire.Txn {
			return false
		}
		return rec.Op.Kind.IsWrite() && !(r.weak.WeakWritesAreDeps && rec.Op.Level == wire.Weak)
	})
}

// appended is where, on the leader, an operation gets its slot, its
// conflict check against earlier unapplied operations, and its speculative
// reply, which it returns for the core to send.
func (r *Replica) appended(index uint64, req *wire.Request) Speculative {
	if !r.IsLeader() {
		return Speculative{}
	}
	op := &req.Op
	if r.weakPath(op) {
		r.poolLogged(index, req)
		return Speculative{}
	}
	// A transaction or a scan takes the slow path: it may touch any key,
	// so no witness records it, and it is answered once applied.
	conflict := op.Kind == wire.Scan || op.Kind == wire.Txn && !broken.speculateTxns || r.conflicting(op) != nil
	r.poolLogged(index, req)
	to, ok := r.Client(op.ID)
	if !ok {
		return Speculative{}
	}
	rep := &wire.Reply{Kind: wire.ReplySpeculative, ID: op.ID, Ok: !conflict, Slot: index,
		Witnesses: r.wit.vouched}
	if !conflict && !op.Kind.IsWrite() {
		v, found := r.Store().Read(op.Key)
		rep.Found, rep.Value, rep.Revision = found, v.Value, v.Revision()
	}
	if !conflict && op.Kind == wire.Txn { // the speculateTxns mutation
		rep.Found, rep.Value, rep.Ok = speculateTxn(r.Store(), index, op)
	}
	return Speculative{To: to, Op: op, Reply: rep}
}

// forgetAcked drops records of a session's operations that its client has
// moved past (below the session's floor): they are applied or abandoned,
// and a stale record would otherwise block the fast path on its key
// forever. It runs after every applied operation, so it costs what the
// floor moved, not what the session has pooled: a replica replaying its
// log after a restart holds thousands of records per session, and looking
// at all of them for every entry replayed kept it from voting for seconds.
func (r *Replica) forgetAcked(session uint64) {
	floor, from := r.Store().Floor(session), r.forgotBelow[session]
	if floor <= from {
		return
	}
	var stale []wire.OpID
	if floor-from <= uint64(r.pool.SessionLen(session)) {
		for seq := from; seq < floor; seq++ {
			if id := (wire.OpID{Session: session, Seq: seq}); r.pool.Get(id) != nil {
				stale = append(stale, id)
			}
		}
	} else {
		r.pool.Session(session, func(rec *witness.Record) {
			if rec.Op.ID.Seq < floor {
				stale = append(stale, rec.Op.ID)
			}
		})
	}
	for _, id := range stale {
		r.pool.Remove(id)
		r.ForgetClient(id)
	}
	if r.pool.SessionLen(session) == 0 {
		delete(r.forgotBelow, session)
	} else {
		r.forgotBelow[session] = floor
	}
}

// weakPath reports whether op takes a hybrid protocol's weak path.
func (r *Replica) weakPath(op *wire.Op) bool {
	return op.Level == wire.Weak && r.weak.Serve && op.Kind != wire.Txn
}
