package curp

import (
	"fmt"
	"log/slog"

	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/kvstore"
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
	// Extension adds a hybrid protocol's weak path; nil is plain CURP,
	// which serves weak operations as strong ones.
	Extension Extension
	Logger    *slog.Logger
}

// Extension is what a hybrid protocol adds to a CURP replica.
type Extension interface {
	// Weak handles a weak request.
	Weak(r *Replica, from wire.NodeID, req *wire.Request)
	// Conflicts says whether a pooled write conflicts with a strong
	// operation on its key.
	Conflicts(rec *witness.Record, op *wire.Op) bool
	// Annotate completes a witness reply or the leader's ok speculative
	// reply to a strong operation.
	Annotate(r *Replica, op *wire.Op, rep *wire.Reply)
	// Admit lets the leader propose a strong request now; an extension
	// that says no must Propose it itself later.
	Admit(r *Replica, from wire.NodeID, req *wire.Request) bool
	// Applied runs after the replica applied a logged operation.
	Applied(r *Replica, index uint64, req *wire.Request, res kvstore.Result)
	// Appended runs for every entry added to this replica's log.
	Appended(r *Replica, index uint64, req *wire.Request)
	// Settled runs once a round, after its entries were appended and
	// applied.
	Settled(r *Replica)
	// LeaderPools reports whether the leader pools operations before it
	// logs them (CURP-HO's weak writes); if not, the leader's records are
	// kept by its raft log rather than the witness log (witness.Log).
	LeaderPools() bool
	// ReadsShowPool reports whether Annotate tells a read about pooled
	// writes (CURP-HO's weak writes). If not, a read's reply rests on the
	// applied state alone and goes out without waiting for the disk.
	ReadsShowPool() bool
	// Metrics fills in the sizes of what the extension holds.
	Metrics() []protocol.Measure
}

// Replica is a CURP replica core: the shared replicated state machine plus
// witnesses, speculative replies and recovery.
type Replica struct {
	*smr.Replica
	ext Extension
	// pool holds witness records on a follower and the appended but
	// unapplied operations on the leader.
	pool       *witness.Pool
	retryTicks int
	recovery   *recovery
	waiting    []queued // requests that arrived during recovery
	wit        witnesses
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
	// logged.
	staleTicks, sinceSweep      int
	staleForwarded, staleLogged uint64
}

type queued struct {
	from wire.NodeID
	req  *wire.Request
}

// NewReplica builds a CURP replica core.
func NewReplica(cfg coreconfig.Config, opts Options) (*Replica, error) {
	base, err := smr.New(cfg, smr.Options{MaxBatch: opts.MaxBatch, Logger: opts.Logger,
		CompactEvery: opts.CompactEvery, CompactKeep: opts.CompactKeep, MemoryKeep: opts.MemoryKeep})
	if err != nil {
		return nil, err
	}
	r := &Replica{Replica: base, ext: opts.Extension, pool: witness.New(), forgotBelow: make(map[uint64]uint64),
		retryTicks: max(1, opts.RecoveryRetryTicks), records: cfg.Records,
		recordsInLog: cfg.Records != nil && (opts.Extension == nil || !opts.Extension.LeaderPools()),
		// A restarted witness is complete if its records survived.
		wit: newWitnesses(cfg.Rand.Uint64(), !base.Restarted() || cfg.Records != nil || broken.trustRestarted)}
	if err := r.loadRecords(); err != nil {
		return nil, fmt.Errorf("replica %d: witness records: %w", cfg.ID, err)
	}
	if opts.RecoveryRetryTicks <= 0 {
		r.retryTicks = 10
	}
	r.staleTicks = opts.StaleRecordTicks
	if r.staleTicks <= 0 {
		r.staleTicks = defaultStaleRecordTicks
	}
	// Entries logged before a restart and not applied yet are appended
	// as far as the protocol is concerned.
	base.EachUnapplied(r.appendedEntry)
	return r, nil
}

// Pool exposes the witness pool to extensions.
func (r *Replica) Pool() *witness.Pool { return r.pool }

// Step implements protocol.Replica.
func (r *Replica) Step(from wire.NodeID, m wire.Message) {
	switch m := m.(type) {
	case *wire.Raft:
		r.StepRaft(from, m)
	case *wire.Request:
		r.request(from, m)
	default:
		r.message(from, m)
	}
}

func (r *Replica) message(from wire.NodeID, m wire.Message) {
	switch m := m.(type) {
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

func (r *Replica) appendedEntry(index uint64, req *wire.Request) {
	r.appended(index, req)
	if r.ext != nil {
		r.ext.Appended(r, index, req)
	}
}

func (r *Replica) appliedEntry(index uint64, req *wire.Request, res kvstore.Result, reply *wire.Reply) {
	r.pool.Remove(req.Op.ID)
	r.forgetAcked(req.Op.ID.Session)
	if reply != nil && r.weakPath(&req.Op) {
		reply.Kind = wire.ReplyWeak
	}
	if r.ext != nil {
		r.ext.Applied(r, index, req, res)
	}
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
	waiting := r.waiting
	r.waiting = nil
	for _, q := range waiting {
		r.request(q.from, q.req) // as a witness now
	}
}

func (r *Replica) settled() {
	if r.ext != nil {
		r.ext.Settled(r)
	}
}

// restored drops records of operations the snapshot already holds.
func (r *Replica) restored() {
	var applied []wire.OpID
	r.pool.Each(func(rec *witness.Record) {
		if r.Replica.Applied(rec.Op.ID) {
			applied = append(applied, rec.Op.ID)
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

func (r *Replica) request(from wire.NodeID, req *wire.Request) {
	if !from.IsClient() {
		r.collect(req) // a peer's stale record
		return
	}
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
		return
	}
	if r.recovery != nil && !(r.weakPath(op) && (!op.Kind.IsWrite() || broken.logInRecovery)) {
		// Nothing is logged before the replay: a later operation of a
		// session logged first would move the session's floor past a
		// replayed one, which would then count as a forgotten duplicate.
		// Only a hybrid protocol's weak reads, which log nothing, go on.
		r.waiting = append(r.waiting, queued{from, req})
		return
	}
	if op.Level == wire.Weak && r.ext != nil {
		r.ext.Weak(r, from, req)
		return
	}
	if !r.IsLeader() {
		r.witness(from, req)
		return
	}
	if r.ext != nil && !r.ext.Admit(r, from, req) {
		return
	}
	r.Propose(from, req)
}

// witness records req's operation unless a conflicting unapplied operation
// is recorded, or this replica knows of no leader.
//
// With no leader, no strong operation can complete on the fast path (it
// needs the leader's speculative reply), so a record would only be work for
// the next leader's recovery, whose order costs the pool's strong
// operations times its size: pools that a leaderless spell at 99 % weak
// filled with thousands of strong operations stalled each new leader for
// seconds, and its followers elected another. Refused, the operation takes
// the slow path once there is a leader; the client retries until then.
func (r *Replica) witness(from wire.NodeID, req *wire.Request) {
	op := &req.Op
	lead, _ := r.Leader()
	ok := lead != 0 && r.conflicting(op) == nil
	if ok {
		r.pool.Add(op, req.PrevWeak)
	}
	rep := &wire.Reply{Kind: wire.ReplyWitness, ID: op.ID, Ok: ok, Incarnation: r.wit.incarnation}
	if ok && r.ext != nil {
		r.ext.Annotate(r, op, rep)
	}
	r.replyTo(from, op, rep)
}

// replyTo sends a reply to a strong operation. A read's need not wait for
// the round's write unless it tells of pooled writes: it vouches for no
// record, only for the applied state (its value) and for the absence of a
// conflicting write, and the read itself changes nothing a crash could
// lose. Replaying a lost read record in recovery would change nothing
// either.
func (r *Replica) replyTo(to wire.NodeID, op *wire.Op, rep *wire.Reply) {
	if !op.Kind.IsWrite() && (r.ext == nil || !r.ext.ReadsShowPool()) || broken.repliesBeforeWrite {
		r.ReplyNow(to, rep)
		return
	}
	r.ReplyAfterWrite(to, rep)
}

// conflicting returns a pooled record that conflicts with strong op: a
// pending write on its key. A pending read does not hold back a later
// write: the read's result is fixed at its slot, before the write's, and
// replaying a read in recovery changes no state. Reads still wait for
// pending writes, which is what keeps a stale leader's reads honest.
func (r *Replica) conflicting(op *wire.Op) *witness.Record {
	return r.pool.Conflicting(op, func(rec *witness.Record) bool {
		return rec.Op.Kind.IsWrite() && (r.ext == nil || r.ext.Conflicts(rec, op))
	})
}

// appended is where, on the leader, an operation gets its slot, its
// conflict check against earlier unapplied operations, and its speculative
// reply.
func (r *Replica) appended(index uint64, req *wire.Request) {
	if !r.IsLeader() {
		return
	}
	op := &req.Op
	if r.weakPath(op) {
		r.poolLogged(index, req)
		return
	}
	conflict := r.conflicting(op) != nil
	r.poolLogged(index, req)
	to, ok := r.Client(op.ID)
	if !ok {
		return
	}
	rep := &wire.Reply{Kind: wire.ReplySpeculative, ID: op.ID, Ok: !conflict, Slot: index,
		Witnesses: r.wit.vouched}
	if !conflict {
		if !op.Kind.IsWrite() {
			v, found := r.Store().Read(op.Key)
			rep.Found, rep.Value = found, v.Value
		}
		if r.ext != nil {
			r.ext.Annotate(r, op, rep)
		}
	}
	r.replyTo(to, op, rep)
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
	return op.Level == wire.Weak && r.ext != nil
}
