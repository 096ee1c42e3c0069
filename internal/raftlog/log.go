package raftlog

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Config builds a Log.
type Config struct {
	ID    uint64
	Peers []uint64 // every voter, including ID
	// ElectionTicks is the base election timeout E: a follower campaigns
	// after hearing nothing from a leader for a random [E, 2E) ticks.
	ElectionTicks  int
	HeartbeatTicks int
	Rand           *rand.Rand
	// Storage survives a restart in the simulator; nil starts empty.
	Storage *raft.MemoryStorage
	// MaxSizePerMsg bounds the bytes of entries in one append message.
	MaxSizePerMsg uint64
	// MaxInflight bounds unacknowledged append messages per follower.
	MaxInflight int
	Logger      raft.Logger
}

// Handler receives what one Ready round produced, in this order: appended
// entries, then messages, then committed entries.
type Handler interface {
	// Appended is called for each entry added to this replica's log, in
	// index order (data is empty for raft's own entries).
	Appended(index uint64, data []byte)
	// Send must deliver m to m.To; m is owned by the handler afterwards.
	Send(m *raftpb.Message)
	// Apply is called for each committed normal entry, in index order.
	Apply(index uint64, data []byte)
	// Restore replaces the applied state with a snapshot's.
	Restore(index uint64, data []byte)
}

// Log wraps a raft RawNode.
type Log struct {
	cfg     Config
	rn      *raft.RawNode
	storage *raft.MemoryStorage
	rand    *rand.Rand

	// Follower election timer (see the package doc).
	elapsed int
	timeout int
	// Leader check-quorum timer.
	quorumElapsed int

	leader, term uint64
	applied      uint64
	committed    uint64
}

// ErrNotLeader is returned by Propose on a replica that is not the leader.
var ErrNotLeader = errors.New("raftlog: not the leader")

// New creates a Log. With empty storage the cluster is bootstrapped from
// cfg.Peers; with surviving storage the replica resumes from it.
func New(cfg Config) (*Log, error) {
	if cfg.Rand == nil {
		return nil, errors.New("raftlog: Config.Rand is required")
	}
	if cfg.ElectionTicks <= cfg.HeartbeatTicks || cfg.HeartbeatTicks <= 0 {
		return nil, fmt.Errorf("raftlog: need 0 < heartbeat ticks (%d) < election ticks (%d)",
			cfg.HeartbeatTicks, cfg.ElectionTicks)
	}
	st := cfg.Storage
	if st == nil {
		st = raft.NewMemoryStorage()
	}
	if err := bootstrap(st, cfg.Peers); err != nil {
		return nil, err
	}
	applied, err := st.FirstIndex()
	if err != nil {
		return nil, err
	}
	rc := &raft.Config{
		ID:                        cfg.ID,
		ElectionTick:              cfg.ElectionTicks,
		HeartbeatTick:             cfg.HeartbeatTicks,
		Storage:                   st,
		Applied:                   applied - 1,
		MaxSizePerMsg:             orDefault(cfg.MaxSizePerMsg, 1<<20),
		MaxInflightMsgs:           int(orDefault(uint64(cfg.MaxInflight), 256)),
		MaxUncommittedEntriesSize: 1 << 30,
		PreVote:                   true,
		DisableProposalForwarding: true,
		Logger:                    cfg.Logger,
	}
	if rc.Logger == nil {
		rc.Logger = discardLogger{}
	}
	rn, err := raft.NewRawNode(rc)
	if err != nil {
		return nil, err
	}
	l := &Log{cfg: cfg, rn: rn, storage: st, rand: cfg.Rand, applied: applied - 1}
	l.resetTimeout()
	return l, nil
}

// bootstrap gives an empty storage the initial configuration as a snapshot
// at index 1, the way etcd raft recommends over RawNode.Bootstrap.
func bootstrap(st *raft.MemoryStorage, peers []uint64) error {
	last, err := st.LastIndex()
	if err != nil || last > 0 {
		return err
	}
	snap, err := st.Snapshot()
	if err != nil {
		return err
	}
	if snap.GetMetadata().GetIndex() > 0 {
		return nil
	}
	voters := append([]uint64(nil), peers...)
	err = st.ApplySnapshot(&raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{
		Index:     new(uint64(1)),
		Term:      new(uint64(1)),
		ConfState: &raftpb.ConfState{Voters: voters},
	}})
	if err != nil {
		return err
	}
	return st.SetHardState(&raftpb.HardState{Term: new(uint64(1)), Commit: new(uint64(1))})
}

func orDefault(v, d uint64) uint64 {
	if v == 0 {
		return d
	}
	return v
}

func (l *Log) resetTimeout() {
	l.elapsed = 0
	l.timeout = l.cfg.ElectionTicks + l.rand.IntN(l.cfg.ElectionTicks)
}

// Leader returns the leader this replica knows of (0 when none) and the term.
func (l *Log) Leader() (leader, term uint64) { return l.leader, l.term }

// IsLeader reports whether this replica leads.
func (l *Log) IsLeader() bool { return l.leader == l.cfg.ID }

// Applied returns the index of the last entry handed to Apply or Restore.
func (l *Log) Applied() uint64 { return l.applied }

// Committed returns the highest index known committed.
func (l *Log) Committed() uint64 { return l.committed }

// Storage exposes the replica's raft storage so a simulated crash can keep it.
func (l *Log) Storage() *raft.MemoryStorage { return l.storage }

// Tick advances the log's clock by one tick.
func (l *Log) Tick() {
	if l.IsLeader() {
		l.rn.Tick()
		l.quorumElapsed++
		if l.quorumElapsed >= l.cfg.ElectionTicks {
			l.quorumElapsed = 0
			l.checkQuorum()
		}
		return
	}
	l.elapsed++
	if l.elapsed >= l.timeout {
		l.resetTimeout()
		_ = l.rn.Campaign()
	}
}

// checkQuorum steps the leader down if a majority did not answer since the
// last check. The message is local to raft, hence the local sender ID.
func (l *Log) checkQuorum() {
	_ = l.rn.Step(&raftpb.Message{
		Type: raftpb.MessageType_MsgCheckQuorum.Enum(),
		From: new(raft.LocalAppendThread),
	})
}

// Step consumes a raft message from a peer.
func (l *Log) Step(m *raftpb.Message) error {
	switch m.GetType() {
	case raftpb.MessageType_MsgApp, raftpb.MessageType_MsgHeartbeat, raftpb.MessageType_MsgSnap:
		if m.GetTerm() >= l.term {
			l.elapsed = 0
		}
	}
	return l.rn.Step(m)
}

// Propose appends entries to the log if this replica leads. The entries'
// indexes are reported through Handler.Appended in the next Ready.
func (l *Log) Propose(data [][]byte) error {
	if !l.IsLeader() {
		return ErrNotLeader
	}
	if len(data) == 0 {
		return nil
	}
	ents := make([]raftpb.Entry, len(data))
	ptrs := make([]*raftpb.Entry, len(data))
	for i := range data {
		ents[i].Data = data[i]
		ptrs[i] = &ents[i]
	}
	err := l.rn.Step(&raftpb.Message{
		Type:    raftpb.MessageType_MsgProp.Enum(),
		From:    new(l.cfg.ID),
		Entries: ptrs,
	})
	if errors.Is(err, raft.ErrProposalDropped) {
		return ErrNotLeader
	}
	return err
}

// Ready persists, sends and applies everything raft has ready, reporting it
// to h. Storage is in memory, so entries are durable before any message that
// acknowledges them is sent.
func (l *Log) Ready(h Handler) error {
	for l.rn.HasReady() {
		rd := l.rn.Ready()
		if rd.SoftState != nil {
			l.setLeader(rd.SoftState.Lead)
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			l.term = rd.HardState.GetTerm()
			l.committed = rd.HardState.GetCommit()
			if err := l.storage.SetHardState(rd.HardState); err != nil {
				return err
			}
		}
		if rd.Snapshot != nil && !raft.IsEmptySnap(rd.Snapshot) {
			if err := l.storage.ApplySnapshot(rd.Snapshot); err != nil {
				return err
			}
			idx := rd.Snapshot.GetMetadata().GetIndex()
			h.Restore(idx, rd.Snapshot.GetData())
			l.applied = idx
		}
		if len(rd.Entries) > 0 {
			if err := l.storage.Append(rd.Entries); err != nil {
				return err
			}
			for _, e := range rd.Entries {
				h.Appended(e.GetIndex(), e.GetData())
			}
		}
		for _, m := range rd.Messages {
			h.Send(m)
		}
		for _, e := range rd.CommittedEntries {
			l.apply(e, h)
		}
		l.rn.Advance(rd)
	}
	return nil
}

func (l *Log) setLeader(lead uint64) {
	if lead == l.leader {
		return
	}
	l.leader = lead
	l.quorumElapsed = 0
	l.resetTimeout()
}

func (l *Log) apply(e *raftpb.Entry, h Handler) {
	// Membership is fixed at bootstrap, so every entry is a normal one;
	// empty ones are raft's own (a new leader's first entry).
	if len(e.GetData()) > 0 {
		h.Apply(e.GetIndex(), e.GetData())
	}
	l.applied = e.GetIndex()
}

// Compact snapshots the state at the applied index (data is the
// application's serialized state) and discards log entries before it,
// keeping keep entries so slightly lagging followers need no snapshot.
func (l *Log) Compact(keep uint64, data []byte) error {
	if l.applied <= keep {
		return nil
	}
	cs := &raftpb.ConfState{Voters: l.cfg.Peers}
	if _, err := l.storage.CreateSnapshot(l.applied, cs, data); err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
		return err
	}
	err := l.storage.Compact(l.applied - keep)
	if errors.Is(err, raft.ErrCompacted) {
		return nil
	}
	return err
}

type discardLogger struct{}

func (discardLogger) Debug(...any)              {}
func (discardLogger) Debugf(string, ...any)     {}
func (discardLogger) Error(...any)              {}
func (discardLogger) Errorf(string, ...any)     {}
func (discardLogger) Info(...any)               {}
func (discardLogger) Infof(string, ...any)      {}
func (discardLogger) Warning(...any)            {}
func (discardLogger) Warningf(string, ...any)   {}
func (discardLogger) Fatal(v ...any)            { panic(fmt.Sprint(v...)) }
func (discardLogger) Fatalf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
func (discardLogger) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (discardLogger) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
