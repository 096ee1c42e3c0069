package epaxos

import (
	"fmt"
	"log/slog"
	"math/rand/v2"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/quorum"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Options tune a replica.
type Options struct {
	// MaxBatch opens an instance early once a batch holds this many
	// requests; 0 takes 256.
	MaxBatch int
	// CompactEvery is how many records the replica writes between
	// snapshots of its state; 0 takes 50,000, and the core
	// configuration's CompactEvery, when set (the simulator's small
	// thresholds), replaces it.
	CompactEvery uint64
	Logger       *slog.Logger
	// WeakPath turns EPaxos into EPaxos-HO (see weak.go).
	WeakPath bool
}

// maxBatch bounds a command's operations: slot gives each 12 bits.
const maxBatch = 4095

// Replica is an EPaxos replica core.
type Replica struct {
	id    wire.NodeID
	peers []wire.NodeID
	n     int
	opts  Options
	rand  *rand.Rand
	log   *slog.Logger

	// resendTicks is how long a phase waits for replies before it sends
	// again (and the command leader gives up on the fast path);
	// recoverTicks how long an instance this replica needs may stay
	// uncommitted before it starts recovery.
	resendTicks, recoverTicks uint64
	now                       uint64

	instances map[wire.Instance]*instance
	// uncommitted are the known instances not committed yet.
	uncommitted map[wire.Instance]*instance
	conf        *conflicts
	store       *kvstore.Store
	exec        executor
	gc          collector

	// nextNum is the next instance number of this replica's row;
	// reserved the first one no durable record allows it to use yet.
	nextNum, reserved uint64

	batch   []*wire.Request
	waiting map[wire.OpID]wire.NodeID
	// acks holds the weak writes to answer once their instance's record
	// is durable.
	acks map[wire.OpID]wire.NodeID
	// parked holds the weak reads waiting, by the instance each waits
	// to execute here (see weakRead); woken, those whose instance
	// executed, to look at again once the round's execution is done.
	parked map[wire.Instance][]parkedRead
	woken  []parkedRead
	// notify holds the weak writes acknowledged here whose client is
	// told when they execute.
	notify map[wire.OpID]wire.NodeID
	// proposed holds the operations this replica put in an instance that
	// has not executed, so that a retry is not proposed again.
	proposed map[wire.OpID]wire.Instance
	// fragments holds what clients said of instances this replica holds
	// no command of (see noteFragment).
	fragments map[wire.Instance][]wire.Op

	disk    raftlog.Disk
	records recordLog

	msgs, after []wire.Envelope

	stats stats
}

type stats struct {
	fast, slow, recoveries, noops, executed uint64
	// executeWait sums, over the executed instances, the ticks from
	// their commit here to their execution: what waiting for their
	// dependencies cost them. The strong ones are those holding a strong
	// operation, counted apart since a strong operation's reply waits for
	// its execution.
	executeWait, strongExecuted, strongExecuteWait uint64
	// fragments counts the recoveries that proposed clients' weak
	// writes (see decide).
	fragments uint64
	// overwritten counts the weak writes counted as applied because a
	// later write of their session overwrote them first (see
	// applyOverwrites).
	overwritten uint64
	// readChecks counts the looks at whether a weak read may be
	// answered (waitsFor): one when it arrives and one each time what it
	// waited for executes, however many messages pass meanwhile.
	readChecks uint64
	// executedSet fingerprints the set of executed instances, whatever
	// the order: two replicas with equal ones executed the same
	// instances (see Status).
	executedSet uint64
}

var _ protocol.Replica = (*Replica)(nil)

// NewReplica builds a replica from what its disk holds.
func NewReplica(cfg coreconfig.Config, opts Options) (*Replica, error) {
	if cfg.CompactEvery != 0 {
		opts.CompactEvery = cfg.CompactEvery
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	opts.MaxBatch = min(opts.MaxBatch, maxBatch)
	if opts.CompactEvery == 0 {
		opts.CompactEvery = 50_000
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	for _, p := range cfg.Peers {
		if p == 0 || p > 255 {
			return nil, fmt.Errorf("epaxos: replica id %d out of 1..255 (ballots hold it in a byte)", p)
		}
	}
	election := uint64(max(cfg.ElectionTicks, 2))
	r := &Replica{
		id: cfg.ID, peers: cfg.Peers, n: len(cfg.Peers), opts: opts, rand: cfg.Rand,
		log:          opts.Logger.With("replica", cfg.ID),
		resendTicks:  election,
		recoverTicks: election,
		instances:    make(map[wire.Instance]*instance),
		uncommitted:  make(map[wire.Instance]*instance),
		conf:         newConflicts(),
		store:        kvstore.New(),
		waiting:      make(map[wire.OpID]wire.NodeID),
		acks:         make(map[wire.OpID]wire.NodeID),
		notify:       make(map[wire.OpID]wire.NodeID),
		proposed:     make(map[wire.OpID]wire.Instance),
		fragments:    make(map[wire.Instance][]wire.Op),
		disk:         cfg.Disk,
		nextNum:      1,
	}
	if r.rand == nil {
		r.rand = rand.New(rand.NewPCG(uint64(cfg.ID), 0))
	}
	r.exec.init()
	r.gc.init(r.peers)
	if err := r.load(cfg.Bootstrap); err != nil {
		return nil, err
	}
	return r, nil
}

// majority is a classic quorum; fastQuorum the replicas, the command
// leader included, whose agreement commits at ballot 0.
func (r *Replica) majority() int { return quorum.Majority(r.n) }
func (r *Replica) fastQuorum() int {
	if f := (r.n - 1) / 2; broken.thriftyFastQuorum {
		return f + (f+1)/2
	}
	return max(r.n-1, r.majority())
}

func (r *Replica) send(to wire.NodeID, m wire.Message) {
	r.msgs = append(r.msgs, wire.Envelope{To: to, Msg: m})
}

// sendAfter sends m once this round's write is durable; to the replica
// itself, it comes back as a message.
func (r *Replica) sendAfter(to wire.NodeID, m wire.Message) {
	r.after = append(r.after, wire.Envelope{To: to, Msg: m})
}

func (r *Replica) others() []wire.NodeID {
	out := make([]wire.NodeID, 0, r.n-1)
	for _, p := range r.peers {
		if p != r.id {
			out = append(out, p)
		}
	}
	return out
}

// get returns the instance, known or not.
func (r *Replica) get(id wire.Instance) *instance {
	inst := r.instances[id]
	if inst == nil {
		inst = &instance{id: id}
		r.instances[id] = inst
		r.uncommitted[id] = inst
	}
	return inst
}

// Step implements protocol.Replica.
func (r *Replica) Step(from wire.NodeID, m wire.Message) {
	switch m := m.(type) {
	case *wire.Request:
		r.request(from, m)
	case *wire.EPaxos:
		r.stepEPaxos(from, m)
	}
	r.settle()
}

// settle executes what can be executed and answers the weak reads that
// waited for it.
func (r *Replica) settle() {
	r.exec.run(r)
	r.releaseParked()
}

func (r *Replica) stepEPaxos(from wire.NodeID, m *wire.EPaxos) {
	if m.Kind == wire.EExecuted {
		r.gc.note(from, m.Executed)
		r.gc.collect(r)
		r.catchUp(m.Executed)
		return
	}
	if m.Instance.Replica == 0 || r.gc.forgotten(m.Instance) {
		return
	}
	switch m.Kind {
	case wire.EPreAccept:
		r.onPreAccept(from, m)
	case wire.EAccept:
		r.onAccept(from, m)
	case wire.ECommit:
		r.commit(r.get(m.Instance), m.Command, m.Deps)
	case wire.EPrepare:
		r.onPrepare(from, m)
	case wire.EPreAcceptReply, wire.EAcceptReply, wire.EPrepareReply:
		r.onReply(from, m)
	}
}

// request takes a client's operation: answered from the session table
// if it executed, else batched for a new instance of this replica's row;
// with the weak path, a weak read is answered from the state and a weak
// write once its instance is recorded here.
func (r *Replica) request(from wire.NodeID, req *wire.Request) {
	for i := range req.WriteSlots {
		if i < len(req.Writes) {
			r.noteFragment(req.Writes[i], req.WriteSlots[i])
		}
	}
	if req.Flags&wire.FlagReissue != 0 {
		w := req.Op
		w.Level = wire.Weak
		r.noteFragment(w, req.AckedAt)
	}
	if r.isWeakRead(&req.Op) {
		r.weakRead(from, req)
		return
	}
	weakWrite := r.isWeakWrite(&req.Op)
	res, outcome := r.store.Lookup(req.Op.ID)
	switch {
	case outcome == kvstore.Forgotten:
		return
	case outcome == kvstore.Applied && weakWrite:
		r.send(from, &wire.Reply{Kind: wire.ReplyWeak, ID: req.Op.ID, Ok: true})
		return
	case outcome == kvstore.Applied:
		r.send(from, resultReply(req.Op.ID, res, false))
		return
	}
	if weakWrite {
		r.acks[req.Op.ID] = from
	} else {
		r.waiting[req.Op.ID] = from
	}
	if id, ok := r.proposed[req.Op.ID]; ok {
		// In an instance of this replica's row (or its next batch): the
		// reply will follow; a weak write's, once the instance is
		// recorded, which an open instance is.
		if inst := r.instances[id]; weakWrite && inst != nil {
			r.ackWeakWrites(inst)
		}
		return
	}
	r.carry(req)
	r.proposed[req.Op.ID] = wire.Instance{}
	r.batch = append(r.batch, req)
	if len(r.batch) >= r.opts.MaxBatch {
		r.Flush()
	}
}

// resultReply answers an executed operation; Ok says its instance
// committed on the fast path, Slot names the operation's instance (see
// slot), which EPaxos-HO's client passes on in later requests' After.
func resultReply(id wire.OpID, res kvstore.Result, fast bool) *wire.Reply {
	return &wire.Reply{Kind: wire.ReplySync, ID: id, Ok: fast, Found: res.Found, Value: res.Value, Revision: res.Revision, Slot: res.Slot}
}

// Pending implements protocol.Replica.
func (r *Replica) Pending() bool { return len(r.batch) > 0 }

// Flush implements protocol.Replica: the batch becomes a command of a new
// instance of this replica's row.
func (r *Replica) Flush() {
	if len(r.batch) == 0 {
		return
	}
	c := wire.Command{Ops: make([]wire.Op, len(r.batch)), AckedBelow: make([]uint64, len(r.batch))}
	var after []wire.Instance
	for i, req := range r.batch {
		c.Ops[i], c.AckedBelow[i] = req.Op, req.AckedBelow
		after = append(after, req.After...)
		if over := r.overwrites(&req.Op); len(over) > 0 {
			if c.Overwrites == nil {
				c.Overwrites = make([][]uint64, len(r.batch))
			}
			c.Overwrites[i] = over
		}
	}
	clear(r.batch)
	r.batch = r.batch[:0]
	r.propose(c, after)
	r.settle()
}

// Tick implements protocol.Replica.
func (r *Replica) Tick() {
	r.now++
	r.tickCoordinators()
	r.recoverStuck()
	if r.now%r.resendTicks == 0 {
		r.gc.announce(r)
	}
	r.settle()
}

// Ready implements protocol.Replica.
func (r *Replica) Ready() protocol.Ready {
	rd := protocol.Ready{Messages: r.msgs, After: r.after}
	var snap *raftpb.Snapshot
	var data []byte
	if r.compactDue() {
		snap, data = r.snapshot()
		r.records.sinceSnapshot = 0
	}
	if w := r.records.take(r.disk, snap, data); w != nil {
		rd.Write = w
	}
	return rd
}

// Advance implements protocol.Replica.
func (r *Replica) Advance() {
	r.msgs, r.after = nil, nil
}

// Status implements protocol.Replica. A leaderless replica leads its own
// instances: it names itself. There is no log: Commit counts the executed
// instances and Applied fingerprints which ones, so that replicas with
// equal Applied hold equal states (the checker's E1 compares exactly
// those), where equal counts of different instances would not.
func (r *Replica) Status() protocol.Status {
	return protocol.Status{ID: r.id, Leader: r.id, Term: 1, Commit: r.stats.executed,
		Applied: r.stats.executedSet, Digest: r.store.Digest()}
}

// Read returns a key's value in this replica's executed state, for tests.
func (r *Replica) Read(key string) ([]byte, bool) {
	v, ok := r.store.Read(key)
	return v.Value, ok
}

// Metrics implements protocol.Replica.
func (r *Replica) Metrics() protocol.Metrics {
	m := protocol.Metrics{Status: r.Status(), Batch: len(r.batch), AwaitingReply: len(r.waiting),
		Keys: r.store.Len(), Sessions: r.store.Sessions(), Replies: r.store.Replies()}
	for _, inst := range r.uncommitted {
		if inst.id.Replica == r.id {
			m.InFlight++
		}
	}
	m.Own = []protocol.Measure{
		{Name: "epaxos_fast_commits_total", Help: "Instances this replica committed on the fast path.", Counter: true, Value: float64(r.stats.fast)},
		{Name: "epaxos_slow_commits_total", Help: "Instances this replica committed after an accept phase.", Counter: true, Value: float64(r.stats.slow)},
		{Name: "epaxos_recoveries_total", Help: "Recoveries this replica started.", Counter: true, Value: float64(r.stats.recoveries)},
		{Name: "epaxos_noops_total", Help: "Instances recovery committed as no-ops, seen by this replica.", Counter: true, Value: float64(r.stats.noops)},
		{Name: "epaxos_recovered_from_clients_total", Help: "Recoveries that proposed, in an instance no replica held the command of, the weak writes clients said it held.", Counter: true, Value: float64(r.stats.fragments)},
		{Name: "epaxos_overwritten_weak_writes_total", Help: "Weak writes counted as applied, without effect, because a later write of their session to the same key executed first (their instance was lost).", Counter: true, Value: float64(r.stats.overwritten)},
		{Name: "epaxos_executed_instances_total", Help: "Instances this replica executed.", Counter: true, Value: float64(r.stats.executed)},
		{Name: "epaxos_commit_to_execute_ticks_total", Help: "Ticks from each executed instance's commit here to its execution, summed: divided by the instances executed and multiplied by the tick, the mean wait for dependencies.", Counter: true, Value: float64(r.stats.executeWait)},
		{Name: "epaxos_strong_executed_instances_total", Help: "Executed instances holding a strong operation.", Counter: true, Value: float64(r.stats.strongExecuted)},
		{Name: "epaxos_strong_commit_to_execute_ticks_total", Help: "Ticks from commit to execution, summed over the executed instances holding a strong operation.", Counter: true, Value: float64(r.stats.strongExecuteWait)},
		{Name: "epaxos_instances", Help: "Instances held in memory.", Value: float64(len(r.instances))},
		{Name: "epaxos_uncommitted", Help: "Known instances not committed yet.", Value: float64(len(r.uncommitted))},
		{Name: "epaxos_key_writes", Help: "Keys whose last executed write the conflict index remembers.", Value: float64(r.conf.lastWrites())},
		{Name: "epaxos_parked_reads", Help: "Weak reads waiting for what their session saw elsewhere to execute here.", Value: float64(r.parkedReads())},
	}
	return m
}
