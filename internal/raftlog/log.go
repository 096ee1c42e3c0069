package raftlog

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
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
	// Disk keeps the log and hard state across a restart. The replica
	// resumes from what it holds; a blank disk bootstraps a new cluster only
	// with Bootstrap set.
	Disk Disk
	// Bootstrap lets a blank disk start a new cluster of Peers. It is
	// ignored when the disk holds state: a replica always resumes from it.
	Bootstrap bool
	// MaxSizePerMsg bounds the bytes of entries in one append message.
	MaxSizePerMsg uint64
	// MaxInflight bounds unacknowledged append messages per follower.
	MaxInflight int
	Logger      raft.Logger
}

// Log wraps a raft RawNode.
type Log struct {
	cfg Config
	rn  *raft.RawNode
	// events is the round being gathered (see Ready), reused.
	events  []Event
	storage *storage
	disk    Disk
	// restarted is set when the disk held state: this replica ran before
	// and lost whatever it kept only in memory.
	restarted bool
	rand      *rand.Rand

	// Follower election timer (see the package doc).
	elapsed int
	timeout int
	// Leader check-quorum timer.
	quorumElapsed int
	// snapshotWaits counts the ticks each follower has waited for a
	// snapshot, on the leader (see snapshots.go).
	snapshotWaits map[uint64]int

	leader, term uint64
	// vote is the candidate this replica voted for in term (0: none).
	vote uint64
	// leaderChanges counts the times a leader became known (see
	// LeaderChanges).
	leaderChanges uint64
	// snapshotsInstalled counts the snapshots from a leader this replica
	// installed in place of its state (see SnapshotsInstalled).
	snapshotsInstalled uint64
	applied            uint64
	committed          uint64
	// compactKeep is the entries a compaction keeps before its snapshot.
	compactKeep uint64
	// compacting is the index of the snapshot being written, 0 if none.
	compacting uint64
	// savedCommit is the commit index of the last hard state the disk
	// saved: a Write raises it once done, on the writer's goroutine (see
	// Compact).
	savedCommit atomic.Uint64
	// acks is what the voters wrote of the current term (see peercommit.go).
	acks *peerAcks
}

// ErrNotLeader is returned by Propose on a replica that is not the leader.
var ErrNotLeader = errors.New("raftlog: not the leader")

// ErrBlankDisk is returned by New for a blank disk without Bootstrap.
var ErrBlankDisk = errors.New("raftlog: the disk holds no raft state and bootstrapping a new cluster was not asked for")

// New creates a Log from what its disk holds. A blank disk starts a new
// cluster of cfg.Peers if cfg.Bootstrap is set and is refused otherwise: a
// replica that lost its disk must not rejoin an existing cluster as if it had
// never voted, or it could vote twice in one term.
func New(cfg Config) (*Log, error) {
	if cfg.Rand == nil {
		return nil, errors.New("raftlog: Config.Rand is required")
	}
	if cfg.Disk == nil {
		return nil, errors.New("raftlog: Config.Disk is required")
	}
	if cfg.ElectionTicks <= cfg.HeartbeatTicks || cfg.HeartbeatTicks <= 0 {
		return nil, fmt.Errorf("raftlog: need 0 < heartbeat ticks (%d) < election ticks (%d)",
			cfg.HeartbeatTicks, cfg.ElectionTicks)
	}
	state, err := cfg.Disk.Load()
	if err != nil {
		return nil, err
	}
	restarted := !state.Blank()
	if !restarted {
		if !cfg.Bootstrap {
			return nil, ErrBlankDisk
		}
		if state, err = bootstrap(cfg.Disk, cfg.Peers); err != nil {
			return nil, err
		}
	}
	raiseCommit(&state)
	st, err := memoryStorage(state)
	if err != nil {
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
		Storage:                   &storage{MemoryStorage: st},
		Applied:                   applied - 1,
		MaxSizePerMsg:             orDefault(cfg.MaxSizePerMsg, 1<<20),
		MaxInflightMsgs:           int(orDefault(uint64(cfg.MaxInflight), 256)),
		MaxUncommittedEntriesSize: 1 << 30,
		PreVote:                   true,
		DisableProposalForwarding: true,
		AsyncStorageWrites:        true,
		Logger:                    cfg.Logger,
	}
	if rc.Logger == nil {
		rc.Logger = discardLogger{}
	}
	rn, err := raft.NewRawNode(rc)
	if err != nil {
		return nil, err
	}
	l := &Log{cfg: cfg, rn: rn, storage: rc.Storage.(*storage), disk: cfg.Disk, restarted: restarted, snapshotWaits: make(map[uint64]int),
		rand: cfg.Rand, applied: applied - 1, acks: newPeerAcks(cfg.ID, cfg.Peers)}
	if hs := state.HardState; hs != nil {
		l.term, l.vote, l.committed = hs.GetTerm(), hs.GetVote(), hs.GetCommit()
		l.savedCommit.Store(hs.GetCommit())
	}
	l.resetTimeout()
	return l, nil
}

// FirstEntry is the index of a new cluster's first log entry: bootstrap
// puts the configuration in a snapshot just before it, holding no state.
const FirstEntry = 2

// bootstrap writes a new cluster's initial state to a blank disk: the
// configuration as a snapshot at index FirstEntry-1, the way etcd raft
// recommends over RawNode.Bootstrap.
func bootstrap(d Disk, peers []uint64) (State, error) {
	snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{
		Index:     new(uint64(FirstEntry - 1)),
		Term:      new(uint64(1)),
		ConfState: &raftpb.ConfState{Voters: append([]uint64(nil), peers...)},
	}}
	hs := &raftpb.HardState{Term: new(uint64(1)), Commit: new(uint64(FirstEntry - 1))}
	if err := d.SaveSnapshot(snap); err != nil {
		return State{}, fmt.Errorf("raftlog: bootstrap: %w", err)
	}
	if err := d.Save(hs, nil); err != nil {
		return State{}, fmt.Errorf("raftlog: bootstrap: %w", err)
	}
	return State{Snapshot: snap, HardState: hs}, nil
}

// raiseCommit raises the loaded commit index to the snapshot's: a
// snapshot covers applied entries only, committed ones, whatever the hard
// state saved with it says. The two are saved apart, the snapshot first
// (a leader's snapshot and the hard state that commits it are two writes),
// so a crash between them left a commit index behind the snapshot, which
// raft refuses to start from ("state.commit is out of range"). A
// compaction waits for the commit to be saved (see Compact).
func raiseCommit(s *State) {
	if s.Snapshot == nil || s.HardState == nil {
		return
	}
	if idx := s.Snapshot.GetMetadata().GetIndex(); s.HardState.GetCommit() < idx {
		hs := clone(s.HardState)
		hs.Commit = new(idx)
		s.HardState = hs
	}
}

// memoryStorage is raft's view of what the disk held.
func memoryStorage(s State) (*raft.MemoryStorage, error) {
	st := raft.NewMemoryStorage()
	if s.Snapshot != nil && !raft.IsEmptySnap(s.Snapshot) {
		if err := st.ApplySnapshot(&raftpb.Snapshot{Metadata: s.Snapshot.GetMetadata()}); err != nil {
			return nil, err
		}
	}
	if s.HardState != nil {
		if err := st.SetHardState(s.HardState); err != nil {
			return nil, err
		}
	}
	if err := st.Append(s.Entries); err != nil {
		return nil, err
	}
	return st, nil
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

// LeaderChanges counts the times this replica learned of a leader since it
// started: raft forgets the leader when an election starts, so each
// election this replica saw the end of counts once, even one the same
// leader won again.
func (l *Log) LeaderChanges() uint64 { return l.leaderChanges }

// SnapshotsInstalled counts the snapshots a leader sent that this replica
// installed in place of its applied state and log since it started.
func (l *Log) SnapshotsInstalled() uint64 { return l.snapshotsInstalled }

// Progress calls fn with each follower's match index (the highest index
// known replicated there), if this replica leads.
func (l *Log) Progress(fn func(id, match uint64)) {
	if !l.IsLeader() {
		return
	}
	l.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if id != l.cfg.ID {
			fn(id, pr.Match)
		}
	})
}

// IsLeader reports whether this replica leads.
func (l *Log) IsLeader() bool { return l.leader == l.cfg.ID }

// Applied returns the index of the last entry handed to Apply or Restore.
func (l *Log) Applied() uint64 { return l.applied }

// Committed returns the highest index known committed.
func (l *Log) Committed() uint64 { return l.committed }

// SnapshotData reads the state of the newest snapshot the log holds from
// the disk: the applied state a restarted replica starts from before raft
// replays the entries after it. Raft's storage keeps only the snapshot's
// metadata in memory (see fillSnapshot).
func (l *Log) SnapshotData() ([]byte, error) {
	snap, err := l.storage.MemoryStorage.Snapshot()
	if err != nil {
		return nil, err
	}
	return l.disk.SnapshotData(snap.GetMetadata())
}

// Restarted reports whether the replica resumed from a disk that held state,
// as opposed to bootstrapping a new cluster. A restarted replica lost what it
// kept only in memory.
func (l *Log) Restarted() bool { return l.restarted }

// FirstIndex is the first index the log still holds (compaction drops what
// comes before).
func (l *Log) FirstIndex() uint64 {
	i, _ := l.storage.FirstIndex()
	return i
}

// LastIndex is the index of the last entry in the log.
func (l *Log) LastIndex() uint64 {
	i, _ := l.storage.LastIndex()
	return i
}

// Term returns the term of the entry at index i, if the log still holds it
// (or its last snapshot ends there).
func (l *Log) Term(i uint64) (uint64, bool) {
	t, err := l.storage.Term(i)
	return t, err == nil
}

// Entries returns the log's entries in [lo, hi).
func (l *Log) Entries(lo, hi uint64) ([]*raftpb.Entry, error) {
	return l.storage.Entries(lo, hi, 1<<62)
}

// DiskStats reports the disk's activity; safe for concurrent use.
func (l *Log) DiskStats() DiskStats { return l.disk.Stats() }

// Tick advances the log's clock by one tick.
func (l *Log) Tick() {
	if l.IsLeader() {
		l.rn.Tick()
		l.tickSnapshots()
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

// Step consumes a raft message from a peer, or one of this replica's own
// that waited for its write.
func (l *Log) Step(m *raftpb.Message) error {
	switch m.GetType() {
	case raftpb.MessageType_MsgApp, raftpb.MessageType_MsgHeartbeat, raftpb.MessageType_MsgSnap:
		if m.GetTerm() >= l.term {
			l.elapsed = 0
		}
	case raftpb.MessageType_MsgStorageAppendResp:
		l.acks.wroteOwn(m.GetTerm(), m.GetIndex(), m.GetLogTerm())
	case raftpb.MessageType_MsgAppResp:
		if isPeerAck(m) {
			l.acks.note(m.GetFrom(), m.GetTerm(), m.GetIndex())
			return nil
		}
	}
	err := l.rn.Step(m)
	l.snapshotAnswered(m)
	return err
}

// Propose appends entries to the log if this replica leads. The entries'
// indexes are reported as Append events of the next Ready.
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

// Ready returns everything raft has ready, as a Round for the owner to act
// on, with what the round asks the disk to keep (Round.Write, nil if
// nothing): raft runs with asynchronous storage writes (see Write).
// Entries are in raft's storage, and reported appended, before they are
// durable; what depends on them being durable is a SendAfterWrite event.
// Committed entries are handed out to apply here: raft hands out only
// those already durable on this replica. The Round is valid until the next
// call.
func (l *Log) Ready() (Round, error) {
	if err := l.installCompacted(); err != nil {
		return Round{}, err
	}
	if err := l.learnCommit(); err != nil {
		return Round{}, err
	}
	clear(l.events)
	l.events = l.events[:0]
	var w *Write
	for l.rn.HasReady() {
		rd := l.rn.Ready()
		if rd.SoftState != nil {
			l.setLeader(rd.SoftState.Lead)
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			l.noteVote(rd.HardState)
			l.term = rd.HardState.GetTerm()
			l.committed = rd.HardState.GetCommit()
			if err := l.storage.SetHardState(rd.HardState); err != nil {
				return Round{}, err
			}
		}
		for _, m := range rd.Messages {
			switch m.GetTo() {
			case raft.LocalAppendThread:
				if w == nil {
					w = &Write{disk: l.disk, savedCommit: &l.savedCommit}
				}
				if err := l.stage(w, m); err != nil {
					return Round{}, err
				}
			case raft.LocalApplyThread:
				if err := l.applyAll(m); err != nil {
					return Round{}, err
				}
			default:
				switch {
				case isPeerAckAnswer(m):
				case m.GetType() != raftpb.MessageType_MsgSnap || l.fillSnapshot(m):
					l.emit(Event{Kind: Send, Msg: m})
				}
			}
		}
	}
	return Round{Events: l.events, Write: w}, nil
}

func (l *Log) emit(e Event) { l.events = append(l.events, e) }

// stage takes a MsgStorageAppend: its snapshot and entries go into raft's
// storage and the applied state now, and into w to be made durable; its
// responses wait for w.
func (l *Log) stage(w *Write, m *raftpb.Message) error {
	if snap := m.GetSnapshot(); snap != nil && !raft.IsEmptySnap(snap) {
		// Raft's storage keeps the metadata; the data goes to the disk.
		if err := l.storage.ApplySnapshot(&raftpb.Snapshot{Metadata: snap.GetMetadata()}); err != nil {
			return err
		}
		idx := snap.GetMetadata().GetIndex()
		l.emit(Event{Kind: Restore, Index: idx, Data: snap.GetData()})
		l.applied = idx
		l.snapshotsInstalled++
	}
	// The entries go into raft's storage first, so that what the protocol
	// asks of the log (an entry's term) covers them.
	if err := l.storage.Append(m.GetEntries()); err != nil {
		return err
	}
	for _, e := range m.GetEntries() {
		l.emit(Event{Kind: Append, Index: e.GetIndex(), Data: e.GetData()})
	}
	w.add(m)
	for _, resp := range m.GetResponses() {
		l.emit(Event{Kind: SendAfterWrite, Msg: resp})
		l.copyAck(resp)
	}
	return nil
}

// applyAll takes a MsgStorageApply: its entries are handed out to apply
// and raft hears they were applied (the owner applies them, in order,
// before anything else happens to it).
func (l *Log) applyAll(m *raftpb.Message) error {
	for _, e := range m.GetEntries() {
		l.apply(e)
	}
	for _, resp := range m.GetResponses() {
		if err := l.rn.Step(resp); err != nil {
			return err
		}
	}
	return nil
}

// fillSnapshot puts the snapshot's data, read from the disk, in a snapshot
// message raft made from its storage (which holds the metadata only); if
// the disk no longer has it, the snapshot is reported failed and raft
// sends a newer one later.
func (l *Log) fillSnapshot(m *raftpb.Message) bool {
	data, err := l.disk.SnapshotData(m.GetSnapshot().GetMetadata())
	if err != nil {
		l.rn.ReportSnapshot(m.GetTo(), raft.SnapshotFailure)
		return false
	}
	m.Snapshot = &raftpb.Snapshot{Metadata: m.GetSnapshot().GetMetadata(), Data: data}
	return true
}

// noteVote restarts the election timer, as raft's own would be, when this
// replica moves to a later term or grants a vote in its term (raft §5.2:
// a follower campaigns once its timeout passes without hearing from a
// leader or granting a vote). Without it, a replica that had heard of no
// leader yet voted for a candidate a moment before its own timeout and
// campaigned before the winner's first append arrived, deposing it.
func (l *Log) noteVote(hs *raftpb.HardState) {
	later := hs.GetTerm() > l.term
	voted := hs.GetVote() != 0 && (later || hs.GetVote() != l.vote)
	l.vote = hs.GetVote()
	if (later || voted) && !l.IsLeader() {
		l.resetTimeout()
	}
}

func (l *Log) setLeader(lead uint64) {
	if lead == l.leader {
		return
	}
	l.leader = lead
	if lead != 0 {
		l.leaderChanges++
	}
	l.quorumElapsed = 0
	clear(l.snapshotWaits)
	l.resetTimeout()
}

func (l *Log) apply(e *raftpb.Entry) {
	// Membership is fixed at bootstrap, so every entry is a normal one;
	// empty ones are raft's own (a new leader's first entry).
	if len(e.GetData()) > 0 {
		l.emit(Event{Kind: Apply, Index: e.GetIndex(), Data: e.GetData()})
	}
	l.applied = e.GetIndex()
}

// CanCompact reports whether the disk's hard state commits index, the
// owner's applied index, so that a snapshot there may be written (see
// Compact).
func (l *Log) CanCompact(index uint64) bool { return l.savedCommit.Load() >= index }

// Compact snapshots the state at index, the owner's applied index (at most
// the last entry Ready handed out to apply), to bound the log:
// freeze is called if a snapshot is due and returns the state at that
// index, to be written out, which the disk runs in the background (see
// Disk.SaveCompaction). Once the snapshot is written, a later round puts
// it in raft's storage and discards the log entries before it, keeping
// keep entries so slightly lagging followers need no snapshot.
//
// Nothing is written until the disk's hard state commits that index
// (CanCompact): raft applies entries once they are durable here,
// while the hard state that commits them may still be on its way to the
// disk, and a snapshot saved ahead of the saved commit index, with a crash
// before that hard state, left a disk raft refused to restart from.
func (l *Log) Compact(index, keep uint64, freeze func() io.WriterTo) error {
	if !l.CanCompact(index) {
		return nil
	}
	l.storage.wanted = false
	if index <= keep {
		return nil
	}
	if snap, err := l.storage.MemoryStorage.Snapshot(); err != nil || snap.GetMetadata().GetIndex() >= index {
		return err
	}
	term, err := l.storage.Term(index)
	if err != nil {
		return err
	}
	snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{
		Index: new(index), Term: new(term), ConfState: &raftpb.ConfState{Voters: l.cfg.Peers},
	}}
	l.compactKeep = keep
	if err := l.disk.SaveCompaction(snap, freeze()); err != nil {
		return fmt.Errorf("raftlog: save snapshot: %w", err)
	}
	l.compacting = index
	return nil
}

// installCompacted puts the snapshot the disk last finished writing in
// raft's storage and discards the entries before it but the kept ones.
func (l *Log) installCompacted() error {
	snap := l.disk.Compacted()
	if snap == nil {
		return nil
	}
	md := snap.GetMetadata()
	if md.GetIndex() >= l.compacting {
		l.compacting = 0
	}
	if _, err := l.storage.CreateSnapshot(md.GetIndex(), md.GetConfState(), nil); err != nil {
		if errors.Is(err, raft.ErrSnapOutOfDate) { // a newer one came from the leader
			return nil
		}
		return err
	}
	if md.GetIndex() <= l.compactKeep {
		return nil
	}
	err := l.storage.Compact(md.GetIndex() - l.compactKeep)
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
