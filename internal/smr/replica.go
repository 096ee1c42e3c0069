package smr

import (
	"cmp"
	"fmt"
	"log/slog"

	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/quorum"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Options tune a replica.
type Options struct {
	// MaxBatch flushes a proposal batch early once it holds this many ops.
	MaxBatch int
	// CompactEvery compacts the raft log after this many applied entries
	// at least (more when the state holds more keys; see maybeCompact),
	// keeping CompactKeep of them for followers that lag a little.
	CompactEvery, CompactKeep uint64
	// MemoryKeep is how many applied entries raft's storage keeps in
	// memory between snapshots (see raftlog's Trim); a follower further
	// behind catches up from a snapshot.
	MemoryKeep uint64
	Logger     *slog.Logger
}

func (o *Options) defaults() {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.CompactEvery == 0 {
		o.CompactEvery = 1 << 16
	}
	if o.CompactKeep == 0 {
		o.CompactKeep = 1 << 14
	}
	if o.MemoryKeep == 0 {
		o.MemoryKeep = 1 << 16
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Replica is the replicated state machine a log-based protocol's core
// owns and drives: the core steps raft's messages into it (StepRaft),
// proposes operations, and walks each round's events (Begin, Next) to
// follow them up.
type Replica struct {
	id    wire.NodeID
	peers []wire.NodeID
	opts  Options
	log   *raftlog.Log
	store *kvstore.Store

	batch [][]byte
	// proposed holds the operations this leader batched or logged and has
	// not applied yet.
	proposed map[wire.OpID]struct{}
	// clients maps an operation to the client to answer when it applies.
	clients map[wire.OpID]wire.NodeID
	// logged holds, on the leader, the operations in its log that are not
	// applied yet, whichever term logged them, with their log indexes.
	logged    map[wire.OpID]uint64
	wasLeader bool
	// tail is the index of the last entry appended, to tell when a new
	// one replaces entries (Replaced).
	tail uint64
	// entries holds the entries appended and not applied yet, decoded.
	entries entries

	sinceCompact uint64
	// ticks counts this replica's ticks, never behind the log's clock (see
	// sessions.go); clockLogged is the latest clock this replica proposed.
	ticks, clockLogged uint64
	expireAfter        uint64
	// out may go at once; after waits for the round's write (see
	// protocol.Ready).
	out   []wire.Envelope
	after []wire.Envelope

	// The round Next walks: the raft log's, how far, and what the last
	// event left unfinished (the entry its Replaced came before, the
	// reply of its Applied).
	round      raftlog.Round
	cursor     int
	phase      roundPhase
	unfinished unfinished
	replacing  raftlog.Event
	reply      *wire.Reply
	replyTo    wire.NodeID
}

// New builds the replicated state machine of one replica. A restarted
// replica's log may hold entries it had appended but not applied before it
// stopped: the protocol owning it should treat them as appended
// (EachUnapplied), as if the replica had never stopped.
func New(cfg coreconfig.Config, opts Options) (*Replica, error) {
	opts.CompactEvery = cmp.Or(opts.CompactEvery, cfg.CompactEvery)
	opts.CompactKeep = cmp.Or(opts.CompactKeep, cfg.CompactKeep)
	opts.MemoryKeep = cmp.Or(opts.MemoryKeep, cfg.MemoryKeep)
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
		Disk:           cfg.Disk,
		Bootstrap:      cfg.Bootstrap,
	})
	if err != nil {
		return nil, fmt.Errorf("replica %d: %w", cfg.ID, err)
	}
	store, err := restoreStore(log)
	if err != nil {
		return nil, fmt.Errorf("replica %d: %w", cfg.ID, err)
	}
	return &Replica{
		expireAfter: uint64(cfg.SessionExpiryTicks),
		ticks:       store.Clock(),
		id:          cfg.ID,
		peers:       cfg.Peers,
		opts:        opts,
		log:         log,
		store:       store,
		proposed:    make(map[wire.OpID]struct{}),
		clients:     make(map[wire.OpID]wire.NodeID),
		logged:      make(map[wire.OpID]uint64),
		tail:        log.LastIndex(),
	}, nil
}

// restoreStore rebuilds the applied state a replica starts from: the last
// snapshot, if the log was compacted (raft replays the rest).
func restoreStore(log *raftlog.Log) (*kvstore.Store, error) {
	data, err := log.SnapshotData()
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return kvstore.New(), nil
	}
	return kvstore.Restore(data)
}

// ID returns the replica's ID.
func (r *Replica) ID() wire.NodeID { return r.id }

// Peers returns every replica, this one included.
func (r *Replica) Peers() []wire.NodeID { return r.peers }

// F is the number of failures the cluster tolerates.
func (r *Replica) F() int { return quorum.F(len(r.peers)) }

// Store exposes the applied state.
func (r *Replica) Store() *kvstore.Store { return r.store }

// IsLeader reports whether this replica leads.
func (r *Replica) IsLeader() bool { return r.log.IsLeader() }

// Leader returns the leader this replica knows of and the term.
func (r *Replica) Leader() (wire.NodeID, uint64) {
	l, t := r.log.Leader()
	return wire.NodeID(l), t
}

// Restarted reports whether the replica resumed from a disk that held
// state: it ran before and lost whatever it kept only in memory.
func (r *Replica) Restarted() bool { return r.log.Restarted() }

// FirstIndex is the first index the raft log still holds.
func (r *Replica) FirstIndex() uint64 { return r.log.FirstIndex() }

// LastIndex is the index of the last entry in the raft log.
func (r *Replica) LastIndex() uint64 { return r.log.LastIndex() }

// Committed is the highest log index known committed.
func (r *Replica) Committed() uint64 { return r.log.Committed() }

// DiskStats reports the disk's activity; safe for concurrent use.
func (r *Replica) DiskStats() raftlog.DiskStats { return r.log.DiskStats() }

// Read returns a key's applied value, for tests and diagnostics.
func (r *Replica) Read(key string) ([]byte, bool) {
	v, ok := r.store.Read(key)
	return v.Value, ok
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

// Tick advances raft's clock and the replica's, for the protocol's Tick.
func (r *Replica) Tick() {
	r.ticks++
	r.log.Tick()
	r.maybeLogClock()
}

// StepRaft hands raft a message from a peer.
func (r *Replica) StepRaft(from wire.NodeID, m *wire.Raft) {
	if err := r.log.Step(m.M); err != nil {
		r.opts.Logger.Debug("raft step", "from", from, "err", err)
	}
}

// SendAfterWrite queues a message to another node. It goes out once what this
// replica has written so far is durable: a protocol's message may vouch for
// anything the replica holds (a witness's record, a logged operation).
func (r *Replica) SendAfterWrite(to wire.NodeID, m wire.Message) {
	r.after = append(r.after, wire.Envelope{To: to, Msg: m})
}

// ReplyAfterWrite sends rep to a client, stamped with this replica's view of the
// leader.
func (r *Replica) ReplyAfterWrite(to wire.NodeID, rep *wire.Reply) {
	r.stamp(rep)
	r.SendAfterWrite(to, rep)
}

// ReplyNow sends rep at once, ahead of the round's write, for a reply that
// vouches only for the applied state, which is committed (a quorum's disks
// hold it), and for what the replica does not hold (no conflicting record).
// A crash that loses the write loses nothing such a reply stood for, so a
// read need not wait for a disk sync. (Applied state a crash rolls back
// is a snapshot from the leader not yet synced here; a session's weak
// reads stay monotonic across it, as the floor each carries makes the
// replica catch up first.)
func (r *Replica) ReplyNow(to wire.NodeID, rep *wire.Reply) {
	r.stamp(rep)
	r.out = append(r.out, wire.Envelope{To: to, Msg: rep})
}

func (r *Replica) stamp(rep *wire.Reply) {
	leader, term := r.log.Leader()
	rep.Term, rep.Leader = term, wire.NodeID(leader)
}

// AnswerApplied answers a request whose operation the store already
// applied, from the session table, and reports whether it did. A result
// the client already acknowledged is forgotten: nothing is sent.
func (r *Replica) AnswerApplied(to wire.NodeID, req *wire.Request) bool {
	res, outcome := r.store.Lookup(req.Op.ID)
	switch outcome {
	case kvstore.Unknown:
		return false
	case kvstore.Applied:
		r.ReplyAfterWrite(to, &wire.Reply{Kind: wire.ReplySync, ID: req.Op.ID, Ok: true,
			Found: res.Found, Value: res.Value, Slot: res.Slot})
	}
	return true
}

// Applied reports whether the store applied the operation.
func (r *Replica) Applied(id wire.OpID) bool {
	_, outcome := r.store.Lookup(id)
	return outcome != kvstore.Unknown
}

// Propose has the leader log req and answer from when it is applied,
// unless it is already on its way. From 0 proposes with no one to answer
// (a new leader replaying a witness record).
func (r *Replica) Propose(from wire.NodeID, req *wire.Request) {
	if from != 0 {
		r.clients[req.Op.ID] = from
	}
	if r.Proposed(req.Op.ID) {
		return // in flight: its reply will follow
	}
	r.proposed[req.Op.ID] = struct{}{}
	data := wire.Append(nil, req)
	r.entries.propose(data, req)
	r.batch = append(r.batch, data)
	if len(r.batch) >= r.opts.MaxBatch {
		r.Flush()
	}
}

// Proposed reports whether this leader has batched or logged the operation
// and not applied it yet.
func (r *Replica) Proposed(id wire.OpID) bool {
	_, ok := r.proposed[id]
	return ok
}

// Client returns the client to answer for an operation, if known.
func (r *Replica) Client(id wire.OpID) (wire.NodeID, bool) {
	c, ok := r.clients[id]
	return c, ok
}

// Pending implements protocol.Replica.
func (r *Replica) Pending() bool { return len(r.batch) > 0 }

// Flush implements protocol.Replica.
func (r *Replica) Flush() {
	if len(r.batch) == 0 {
		return
	}
	if err := r.log.Propose(r.batch); err != nil {
		// Lost leadership: the clients will retry with the new leader.
		r.opts.Logger.Debug("propose", "err", err, "ops", len(r.batch))
		r.entries.dropProposals()
	}
	r.batch = r.batch[:0]
}

// Advance implements protocol.Replica.
func (r *Replica) Advance() {
	clear(r.out)
	r.out = r.out[:0]
}

// Logged reports whether this leader's log holds the operation, not yet
// applied: logged in this term or an earlier one, it will be applied before
// anything this leader logs from now on.
func (r *Replica) Logged(id wire.OpID) bool {
	_, ok := r.logged[id]
	return ok
}

// LoggedAt returns the index at which this leader's log holds the
// operation, if it does and has not applied it yet.
func (r *Replica) LoggedAt(id wire.OpID) (uint64, bool) {
	index, ok := r.logged[id]
	return index, ok
}

// noteLogged records, as a new leader, the unapplied operations its log
// already holds. A leader's log only grows, so they stay logged.
func (r *Replica) noteLogged() {
	r.EachUnapplied(func(index uint64, req *wire.Request) { r.logged[req.Op.ID] = index })
}

// EachUnapplied hands fn every operation in the log after the applied
// state, in log order.
func (r *Replica) EachUnapplied(fn func(index uint64, req *wire.Request)) {
	// The applied state may predate the log's first entry: a new
	// cluster's first snapshot holds no state.
	lo, hi := max(r.store.Applied()+1, r.log.FirstIndex()), r.log.LastIndex()+1
	if lo >= hi {
		return
	}
	ents, err := r.log.Entries(lo, hi)
	if err != nil {
		r.opts.Logger.Warn("read log", "err", err)
		return
	}
	for _, e := range ents {
		if len(e.GetData()) == 0 {
			continue
		}
		if req, ok := decodeEntry(r.id, e.GetIndex(), e.GetData()).(*wire.Request); ok {
			fn(e.GetIndex(), req)
		}
	}
}

// AppliedIndex is the index of the last applied entry.
func (r *Replica) AppliedIndex() uint64 { return r.store.Applied() }

// Term returns the term of this replica's log entry at index, if the log
// still holds it.
func (r *Replica) Term(index uint64) (uint64, bool) { return r.log.Term(index) }

// ForgetClient drops the routing of an operation's result.
func (r *Replica) ForgetClient(id wire.OpID) { delete(r.clients, id) }
