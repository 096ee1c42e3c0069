package curp

import (
	"fmt"
	"log/slog"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Options tune a replica beyond the common configuration.
type Options struct {
	// MaxBatch flushes a proposal batch early once it holds this many ops.
	MaxBatch int
	// CompactEvery compacts the raft log after this many applied entries,
	// keeping CompactKeep of them for followers that lag a little.
	CompactEvery, CompactKeep uint64
	// RecoveryRetryTicks is how often a recovering leader re-asks the
	// witnesses that have not answered.
	RecoveryRetryTicks int
	// Extension adds a hybrid protocol's weak path; nil is plain CURP,
	// which serves weak operations as strong ones.
	Extension Extension
	Logger    *slog.Logger
}

func (o *Options) defaults() {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.CompactEvery == 0 {
		o.CompactEvery = 1 << 20
	}
	if o.CompactKeep == 0 {
		o.CompactKeep = 1 << 16
	}
	if o.RecoveryRetryTicks <= 0 {
		o.RecoveryRetryTicks = 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Extension is what a hybrid protocol adds to a CURP replica.
type Extension interface {
	// Weak handles a weak request.
	Weak(r *Replica, from wire.NodeID, req *wire.Request)
	// Conflicts says whether a pooled record conflicts with a strong
	// operation (on the same key, one of them a write).
	Conflicts(rec *witness.Record, op *wire.Op) bool
	// Annotate completes a witness reply or the leader's ok speculative
	// reply to a strong operation.
	Annotate(r *Replica, op *wire.Op, rep *wire.Reply)
	// Admit lets the leader propose a strong request now; an extension
	// that says no must Propose it itself later.
	Admit(r *Replica, from wire.NodeID, req *wire.Request) bool
	// Applied runs after the replica applied a logged operation.
	Applied(r *Replica, index uint64, req *wire.Request, res kvstore.Result)
}

// Replica is a CURP replica core; see the package doc.
type Replica struct {
	id    wire.NodeID
	peers []wire.NodeID
	f     int
	opts  Options
	log   *raftlog.Log
	store *kvstore.Store
	// pool holds witness records on a follower and the appended but
	// unapplied operations on the leader.
	pool *witness.Pool

	// Leader state.
	batch [][]byte
	// proposed holds the operations this leader batched or logged and has
	// not applied yet.
	proposed  map[wire.OpID]struct{}
	clients   map[wire.OpID]wire.NodeID
	recovery  *recovery
	waiting   []queued // requests that arrived during recovery
	wasLeader bool

	sinceCompact uint64
	out          []wire.Envelope
	scratch      []byte
}

type queued struct {
	from wire.NodeID
	req  *wire.Request
}

// NewReplica builds a CURP replica core.
func NewReplica(cfg protocol.ReplicaConfig, opts Options) (*Replica, error) {
	opts.defaults()
	peers := make([]uint64, len(cfg.Peers))
	for i, p := range cfg.Peers {
		peers[i] = uint64(p)
	}
	log, err := raftlog.New(raftlog.Config{
		ID:             uint64(cfg.ID),
		Peers:          peers,
		ElectionTicks:  cfg.ElectionTicks,
		HeartbeatTicks: cfg.HeartbeatTicks,
		Rand:           cfg.Rand,
		Storage:        cfg.Storage,
	})
	if err != nil {
		return nil, fmt.Errorf("curp: replica %d: %w", cfg.ID, err)
	}
	store := kvstore.New()
	if cfg.Storage != nil {
		if store, err = restoreStore(cfg.Storage); err != nil {
			return nil, fmt.Errorf("curp: replica %d: %w", cfg.ID, err)
		}
	}
	return &Replica{
		id:       cfg.ID,
		peers:    cfg.Peers,
		f:        (len(cfg.Peers) - 1) / 2,
		opts:     opts,
		log:      log,
		store:    store,
		pool:     witness.New(),
		proposed: make(map[wire.OpID]struct{}),
		clients:  make(map[wire.OpID]wire.NodeID),
	}, nil
}

// Status implements protocol.Replica.
func (r *Replica) Status() protocol.Status {
	leader, term := r.log.Leader()
	return protocol.Status{
		ID:      r.id,
		Leader:  wire.NodeID(leader),
		Term:    term,
		Commit:  r.log.Committed(),
		Applied: r.store.Applied(),
		Digest:  r.store.Digest(),
	}
}

// Store exposes the applied state to tests and the simulator.
func (r *Replica) Store() *kvstore.Store { return r.store }

// Log exposes the raft log (its storage survives a simulated crash).
func (r *Replica) Log() *raftlog.Log { return r.log }

// Tick implements protocol.Replica.
func (r *Replica) Tick() {
	r.log.Tick()
	if r.recovery != nil {
		r.recovery.tick(r)
	}
}

// Step implements protocol.Replica.
func (r *Replica) Step(from wire.NodeID, m wire.Message) {
	switch m := m.(type) {
	case *wire.Raft:
		if err := r.log.Step(m.M); err != nil {
			r.opts.Logger.Debug("raft step", "from", from, "err", err)
		}
	case *wire.Request:
		r.onRequest(from, m)
	case *wire.Recover:
		r.onRecover(from, m)
	case *wire.RecoverReply:
		if r.recovery != nil {
			r.recovery.onReply(r, from, m)
		}
	}
}

func (r *Replica) onRequest(from wire.NodeID, req *wire.Request) {
	op := &req.Op
	if res, outcome := r.store.Lookup(op.ID); outcome != kvstore.Unknown {
		r.answerApplied(from, op.ID, res, outcome)
		return
	}
	if op.Level == wire.Weak && r.opts.Extension != nil {
		r.opts.Extension.Weak(r, from, req)
		return
	}
	if !r.log.IsLeader() {
		r.witness(from, op)
		return
	}
	if r.recovery != nil {
		r.waiting = append(r.waiting, queued{from, req})
		return
	}
	if ext := r.opts.Extension; ext != nil && !ext.Admit(r, from, req) {
		return
	}
	r.Propose(from, req)
}

// Propose has the leader log req and answer from when it is applied,
// unless it is already on its way.
func (r *Replica) Propose(from wire.NodeID, req *wire.Request) {
	r.clients[req.Op.ID] = from
	if r.Proposed(req.Op.ID) {
		return // in flight: its reply will follow
	}
	r.enqueue(req)
}

// Proposed reports whether this leader has batched or logged the operation
// and not applied it yet.
func (r *Replica) Proposed(id wire.OpID) bool {
	_, ok := r.proposed[id]
	return ok
}

// answerApplied answers a request for an operation the store already
// applied: the leader resends its result, a witness acknowledges it (an
// applied operation needs no record).
func (r *Replica) answerApplied(to wire.NodeID, id wire.OpID, res kvstore.Result, outcome kvstore.Outcome) {
	if !r.log.IsLeader() {
		r.reply(to, &wire.Reply{Kind: wire.ReplyWitness, ID: id, Ok: true})
		return
	}
	if outcome == kvstore.Applied {
		r.reply(to, &wire.Reply{Kind: wire.ReplySync, ID: id, Ok: true,
			Found: res.Found, Value: res.Value, Slot: res.Slot})
	}
}

// witness records op unless a conflicting unapplied operation is recorded.
func (r *Replica) witness(from wire.NodeID, op *wire.Op) {
	ok := r.conflicting(op) == nil
	if ok {
		r.pool.Add(op)
	}
	rep := &wire.Reply{Kind: wire.ReplyWitness, ID: op.ID, Ok: ok}
	if ok && r.opts.Extension != nil {
		r.opts.Extension.Annotate(r, op, rep)
	}
	r.reply(from, rep)
}

// conflicting returns a pooled record that conflicts with strong op: a
// pending write on its key. A pending read does not hold back a later
// write: the read's result is fixed at its slot, before the write's, and
// replaying a read in recovery changes no state. Reads still wait for
// pending writes, which is what keeps a stale leader's reads honest.
func (r *Replica) conflicting(op *wire.Op) *witness.Record {
	ext := r.opts.Extension
	return r.pool.Conflicting(op, func(rec *witness.Record) bool {
		return rec.Op.Kind.IsWrite() && (ext == nil || ext.Conflicts(rec, op))
	})
}

func (r *Replica) enqueue(req *wire.Request) {
	r.proposed[req.Op.ID] = struct{}{}
	r.batch = append(r.batch, wire.Append(nil, req))
	if len(r.batch) >= r.opts.MaxBatch {
		r.Flush()
	}
}

// Flush implements protocol.Replica.
func (r *Replica) Flush() {
	if len(r.batch) == 0 {
		return
	}
	if err := r.log.Propose(r.batch); err != nil {
		// Lost leadership: the clients will retry with the new leader.
		r.opts.Logger.Debug("propose", "err", err, "ops", len(r.batch))
	}
	r.batch = r.batch[:0]
}

// Reply sends rep to a client, stamped with this replica's view of the
// leader.
func (r *Replica) Reply(to wire.NodeID, rep *wire.Reply) { r.reply(to, rep) }

// IsLeader reports whether this replica leads.
func (r *Replica) IsLeader() bool { return r.log.IsLeader() }

// ID returns the replica's ID.
func (r *Replica) ID() wire.NodeID { return r.id }

// Pool exposes the witness pool to extensions.
func (r *Replica) Pool() *witness.Pool { return r.pool }

func (r *Replica) reply(to wire.NodeID, rep *wire.Reply) {
	leader, term := r.log.Leader()
	rep.Term, rep.Leader = term, wire.NodeID(leader)
	r.out = append(r.out, wire.Envelope{To: to, Msg: rep})
}

// Ready implements protocol.Replica.
func (r *Replica) Ready() []wire.Envelope {
	if err := r.log.Ready(r); err != nil {
		// Memory storage fails only on a broken invariant.
		panic(fmt.Sprintf("curp: replica %d: raft ready: %v", r.id, err))
	}
	r.checkLeadership()
	return r.out
}

// Advance implements protocol.Replica.
func (r *Replica) Advance() {
	clear(r.out)
	r.out = r.out[:0]
}

func (r *Replica) checkLeadership() {
	leader := r.log.IsLeader()
	switch {
	case leader && !r.wasLeader:
		r.startRecovery()
	case !leader && r.wasLeader:
		r.recovery = nil
		r.batch = r.batch[:0]
		clear(r.proposed)
		for _, q := range r.waiting {
			r.witness(q.from, &q.req.Op)
		}
		r.waiting = nil
	}
	r.wasLeader = leader
}

// Appended implements raftlog.Handler. On the leader this is where an
// operation gets its slot, its conflict check against earlier unapplied
// operations, and its speculative reply.
func (r *Replica) Appended(index uint64, data []byte) {
	if !r.log.IsLeader() || len(data) == 0 {
		return
	}
	req, err := decodeEntry(data)
	if err != nil {
		panic(fmt.Sprintf("curp: replica %d: own log entry %d: %v", r.id, index, err))
	}
	op := &req.Op
	if r.weakPath(op) {
		r.pool.Add(op)
		return
	}
	conflict := r.conflicting(op) != nil
	r.pool.Add(op)
	to, ok := r.clients[op.ID]
	if !ok {
		return
	}
	rep := &wire.Reply{Kind: wire.ReplySpeculative, ID: op.ID, Ok: !conflict, Slot: index}
	if !conflict {
		if !op.Kind.IsWrite() {
			v, found := r.store.Read(op.Key)
			rep.Found, rep.Value = found, v.Value
		}
		if r.opts.Extension != nil {
			r.opts.Extension.Annotate(r, op, rep)
		}
	}
	r.reply(to, rep)
}

// Send implements raftlog.Handler.
func (r *Replica) Send(m *raftpb.Message) {
	r.out = append(r.out, wire.Envelope{To: wire.NodeID(m.GetTo()), Msg: &wire.Raft{M: m}})
}

// Apply implements raftlog.Handler: execute in slot order, drop the witness
// record, and on the leader send the sync reply.
func (r *Replica) Apply(index uint64, data []byte) {
	req, err := decodeEntry(data)
	if err != nil {
		panic(fmt.Sprintf("curp: replica %d: log entry %d: %v", r.id, index, err))
	}
	op := &req.Op
	res, _ := r.store.Apply(index, op, req.AckedBelow)
	r.pool.Remove(op.ID)
	delete(r.proposed, op.ID)
	r.forgetAcked(op.ID.Session)
	if to, ok := r.clients[op.ID]; ok {
		delete(r.clients, op.ID)
		if r.log.IsLeader() {
			kind := wire.ReplySync
			if r.weakPath(op) {
				kind = wire.ReplyWeak
			}
			r.reply(to, &wire.Reply{Kind: kind, ID: op.ID, Ok: true,
				Found: res.Found, Value: res.Value, Slot: res.Slot, Applied: index})
		}
	}
	if r.opts.Extension != nil {
		r.opts.Extension.Applied(r, index, req, res)
	}
	r.maybeCompact()
}

// forgetAcked drops records of a session's operations that its client has
// moved past: they are applied or abandoned, and a stale record would
// otherwise block the fast path on its key forever.
func (r *Replica) forgetAcked(session uint64) {
	var stale []wire.OpID
	r.pool.Session(session, func(rec *witness.Record) {
		if _, outcome := r.store.Lookup(rec.Op.ID); outcome == kvstore.Forgotten {
			stale = append(stale, rec.Op.ID)
		}
	})
	for _, id := range stale {
		r.pool.Remove(id)
		delete(r.clients, id)
	}
}

// Restore implements raftlog.Handler.
func (r *Replica) Restore(index uint64, data []byte) {
	st, err := kvstore.Restore(data)
	if err != nil {
		panic(fmt.Sprintf("curp: replica %d: snapshot %d: %v", r.id, index, err))
	}
	r.store = st
	var applied []wire.OpID
	r.pool.Each(func(rec *witness.Record) {
		if _, outcome := st.Lookup(rec.Op.ID); outcome != kvstore.Unknown {
			applied = append(applied, rec.Op.ID)
		}
	})
	for _, id := range applied {
		r.pool.Remove(id)
	}
}

func (r *Replica) maybeCompact() {
	r.sinceCompact++
	if r.sinceCompact < r.opts.CompactEvery {
		return
	}
	r.sinceCompact = 0
	if err := r.log.Compact(r.opts.CompactKeep, r.store.Snapshot()); err != nil {
		r.opts.Logger.Warn("compact", "err", err)
	}
}

func decodeEntry(data []byte) (*wire.Request, error) {
	m, err := wire.Decode(data)
	if err != nil {
		return nil, err
	}
	req, ok := m.(*wire.Request)
	if !ok {
		return nil, fmt.Errorf("log entry holds a %v", m.Type())
	}
	return req, nil
}

// restoreStore rebuilds the applied state a restarted replica starts from:
// the last snapshot, if the log was compacted (raft replays the rest).
func restoreStore(st *raft.MemoryStorage) (*kvstore.Store, error) {
	snap, err := st.Snapshot()
	if err != nil {
		return nil, err
	}
	if len(snap.GetData()) == 0 {
		return kvstore.New(), nil
	}
	return kvstore.Restore(snap.GetData())
}

// weakPath reports whether op takes a hybrid protocol's weak path.
func (r *Replica) weakPath(op *wire.Op) bool {
	return op.Level == wire.Weak && r.opts.Extension != nil
}

// RaftStorage exposes what survives a crash of this replica.
func (r *Replica) RaftStorage() *raft.MemoryStorage { return r.log.Storage() }

// Read returns a key's applied value, for tests and diagnostics.
func (r *Replica) Read(key uint64) ([]byte, bool) {
	v, ok := r.store.Read(key)
	return v.Value, ok
}
