package raftlog

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// watchedDisk records what reached it, so a test can check that nothing is
// sent before it is persisted.
type watchedDisk struct {
	*MemDisk
	lastIndex uint64
	hs        *raftpb.HardState
}

func (d *watchedDisk) Save(hs *raftpb.HardState, ents []*raftpb.Entry) error {
	if len(ents) > 0 {
		d.lastIndex = ents[len(ents)-1].GetIndex()
	}
	if hs != nil {
		d.hs = hs
	}
	return d.MemDisk.Save(hs, ents)
}

func (d *watchedDisk) SaveSnapshot(snap *raftpb.Snapshot) error {
	d.lastIndex = max(d.lastIndex, snap.GetMetadata().GetIndex())
	return d.MemDisk.SaveSnapshot(snap)
}

// testNode is one replica's log and what its Ready rounds produced.
type testNode struct {
	t     *testing.T
	log   *Log
	disk  *watchedDisk
	out   []*raftpb.Message
	later []*raftpb.Message
	// hold keeps the rounds' writes, and what waits for them, back until
	// release: a disk slower than the network.
	hold    bool
	held    []*Write
	applied []uint64
	// restored is the data of the last snapshot restored.
	restored string
}

// take does what a round asks, in order.
func (n *testNode) take(rd Round) {
	for _, e := range rd.Events {
		switch e.Kind {
		case Restore:
			n.restored = string(e.Data)
		case Apply:
			n.applied = append(n.applied, e.Index)
		case Send:
			n.send(e.Msg)
		case SendAfterWrite:
			n.later = append(n.later, e.Msg)
		}
	}
}

// send checks what may leave before the round's write: requests, which
// promise nothing, not the answers that vote for a leader or an entry. The
// leader's appends carry its entries to the followers while its own disk
// writes them, but the leader's term is on its disk: it won on a vote it
// counted only once durable.
func (n *testNode) send(m *raftpb.Message) {
	switch m.GetType() {
	case raftpb.MessageType_MsgAppResp, raftpb.MessageType_MsgVoteResp, raftpb.MessageType_MsgPreVoteResp:
		n.t.Fatalf("%v sent before the round's write", m.GetType())
	case raftpb.MessageType_MsgApp, raftpb.MessageType_MsgHeartbeat:
		require.NotNil(n.t, n.disk.hs, "%v sent before any hard state was persisted", m.GetType())
		require.GreaterOrEqual(n.t, n.disk.hs.GetTerm(), m.GetTerm(), "%v of term %d sent before the term was persisted", m.GetType(), m.GetTerm())
	}
	n.out = append(n.out, m)
}

// ready runs Ready rounds until raft is quiet, doing each round's write
// before what waited for it goes out, and checks raft's rule: what such a
// message claims is on the sender's disk.
func (n *testNode) ready() error {
	for {
		rd, err := n.log.Ready()
		if err != nil {
			return err
		}
		n.take(rd)
		w := rd.Write
		if n.hold {
			if w != nil {
				n.held = append(n.held, w)
			}
		} else {
			if w != nil {
				if err := w.Do(); err != nil {
					return err
				}
			}
			if err := n.deliverLater(); err != nil {
				return err
			}
		}
		if !n.log.rn.HasReady() {
			return nil
		}
	}
}

// release does the writes held back and lets what waited for them go.
func (n *testNode) release() error {
	n.hold = false
	for _, w := range n.held {
		if err := w.Do(); err != nil {
			return err
		}
	}
	n.held = nil
	if err := n.deliverLater(); err != nil {
		return err
	}
	return n.ready()
}

func (n *testNode) deliverLater() error {
	later := n.later
	n.later = nil
	for _, m := range later {
		// A pre-vote answer carries the term the candidate would campaign
		// in, which the voter does not adopt.
		if m.GetTerm() > 0 && m.GetType() != raftpb.MessageType_MsgPreVoteResp {
			require.NotNil(n.t, n.disk.hs, "%v sent before any hard state was persisted", m.GetType())
			require.GreaterOrEqual(n.t, n.disk.hs.GetTerm(), m.GetTerm(), "%v of term %d sent before the term was persisted", m.GetType(), m.GetTerm())
		}
		if m.GetType() == raftpb.MessageType_MsgAppResp && !m.GetReject() && m.GetTo() != n.log.cfg.ID {
			require.LessOrEqual(n.t, m.GetIndex(), n.disk.lastIndex, "acknowledged entry %d before persisting it", m.GetIndex())
		}
		if m.GetTo() == n.log.cfg.ID {
			if err := n.log.Step(m); err != nil {
				return err
			}
			continue
		}
		n.out = append(n.out, m)
	}
	return nil
}

func newTestNode(t *testing.T, id uint64, disk *watchedDisk, bootstrap bool) (*testNode, error) {
	l, err := New(Config{ID: id, Peers: []uint64{1, 2, 3}, ElectionTicks: 10, HeartbeatTicks: 1,
		Rand: rand.New(rand.NewPCG(id, 1)), Disk: disk, Bootstrap: bootstrap})
	if err != nil {
		return nil, err
	}
	return &testNode{t: t, log: l, disk: disk}, nil
}

// testCluster delivers messages between three logs until they are quiet.
type testCluster struct {
	nodes map[uint64]*testNode
	down  map[uint64]bool
	// drop, if set, loses the messages it returns true for.
	drop func(*raftpb.Message) bool
	// compactedState is the state of the leader's last compaction.
	compactedState string
}

func newTestCluster(t *testing.T) *testCluster {
	c := &testCluster{nodes: make(map[uint64]*testNode), down: make(map[uint64]bool)}
	for id := uint64(1); id <= 3; id++ {
		n, err := newTestNode(t, id, &watchedDisk{MemDisk: NewMemDisk()}, true)
		require.NoError(t, err)
		c.nodes[id] = n
	}
	return c
}

func (c *testCluster) settle(t *testing.T) {
	for range 1000 {
		var msgs []*raftpb.Message
		for id := uint64(1); id <= 3; id++ {
			n := c.nodes[id]
			require.NoError(t, n.ready())
			msgs = append(msgs, n.out...)
			n.out = nil
		}
		if len(msgs) == 0 {
			return
		}
		for _, m := range msgs {
			if !c.down[m.GetTo()] && !c.down[m.GetFrom()] && (c.drop == nil || !c.drop(m)) {
				_ = c.nodes[m.GetTo()].log.Step(m)
			}
		}
	}
	t.Fatal("the cluster did not settle")
}

func (c *testCluster) elect(t *testing.T, id uint64) {
	require.NoError(t, c.nodes[id].log.rn.Campaign())
	c.settle(t)
	require.True(t, c.nodes[id].log.IsLeader())
}

func TestBlankDiskIsRefusedWithoutBootstrap(t *testing.T) {
	_, err := newTestNode(t, 1, &watchedDisk{MemDisk: NewMemDisk()}, false)
	require.ErrorIs(t, err, ErrBlankDisk)
}

func TestPersistBeforeSend(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	for range 20 {
		require.NoError(t, c.nodes[1].log.Propose([][]byte{[]byte("x"), []byte("y")}))
		c.settle(t)
	}
	for id := uint64(1); id <= 3; id++ {
		require.Len(t, c.nodes[id].applied, 40, "replica %d", id)
	}
}

// An entry commits once a majority holds it on disk, the leader's own disk
// counting only once written: the leader's appends go out before its write,
// but no one's acknowledgement does.
func TestEntriesCommitOnceAMajorityWroteThem(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	leader := c.nodes[1]
	for _, n := range c.nodes {
		n.hold = true
	}
	index := leader.log.LastIndex() + 1
	require.NoError(t, leader.log.Propose([][]byte{[]byte("x")}))
	c.settle(t)
	require.Equal(t, index, c.nodes[2].log.LastIndex(), "the leader's append waited for its own write")
	require.Less(t, leader.log.Committed(), index, "committed with no write done")

	require.NoError(t, c.nodes[2].release())
	c.settle(t)
	require.Less(t, leader.log.Committed(), index, "committed on one write of three")
	require.Empty(t, leader.applied)

	require.NoError(t, leader.release())
	c.settle(t)
	require.Equal(t, index, leader.log.Committed())
	require.Equal(t, []uint64{index}, leader.applied)
}

func TestRestartResumesFromDisk(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	for range 5 {
		require.NoError(t, c.nodes[1].log.Propose([][]byte{[]byte("x")}))
		c.settle(t)
	}
	old := c.nodes[2]
	_, term := old.log.Leader()
	committed := old.log.Committed()

	// Bootstrap is ignored for a disk that holds state: restarting with the
	// first start's command line is safe.
	n, err := newTestNode(t, 2, old.disk, true)
	require.NoError(t, err)
	require.True(t, n.log.Restarted())
	require.Equal(t, committed, n.log.Committed())
	require.Equal(t, old.log.LastIndex(), n.log.LastIndex())
	_, restartedTerm := n.log.Leader()
	require.Equal(t, term, restartedTerm)
	c.nodes[2] = n

	// It catches up on what was committed while it was down, and raft
	// replays its committed entries to be applied again from the start.
	c.down[2] = true
	require.NoError(t, c.nodes[1].log.Propose([][]byte{[]byte("z")}))
	c.settle(t)
	c.down[2] = false
	c.nodes[1].log.rn.Tick() // a heartbeat reaches the restarted replica
	c.settle(t)
	require.Len(t, n.applied, 6)
}

// TestVoteSurvivesRestart: a replica that voted in a term and restarts
// cannot vote for another candidate in that term.
func TestVoteSurvivesRestart(t *testing.T) {
	c := newTestCluster(t)
	c.down[3] = true
	c.elect(t, 1) // replica 2 votes for 1
	vote := c.nodes[2].disk.hs.GetVote()
	require.Equal(t, uint64(1), vote)

	n, err := newTestNode(t, 2, c.nodes[2].disk, false)
	require.NoError(t, err)
	_, term := c.nodes[1].log.Leader()
	// Replica 3 asks for replica 2's vote in the same term.
	require.NoError(t, n.log.Step(&raftpb.Message{Type: raftpb.MessageType_MsgVote.Enum(),
		From: new(uint64(3)), To: new(uint64(2)), Term: new(term), LogTerm: new(term), Index: new(uint64(100))}))
	require.NoError(t, n.ready())
	require.Len(t, n.out, 1)
	require.Equal(t, raftpb.MessageType_MsgVoteResp, n.out[0].GetType())
	require.True(t, n.out[0].GetReject(), "a restarted replica voted twice in term %d", term)
}

func TestMemDiskCrashKeepsOnlySyncedWrites(t *testing.T) {
	ent := func(i uint64) *raftpb.Entry { return &raftpb.Entry{Index: new(i), Term: new(uint64(1))} }
	d := NewMemDisk()
	require.NoError(t, d.Save(&raftpb.HardState{Term: new(uint64(1))}, []*raftpb.Entry{ent(1), ent(2)}))
	d.Fsync = false
	require.NoError(t, d.Save(nil, []*raftpb.Entry{ent(3)}))
	d.Crash()
	st, err := d.Load()
	require.NoError(t, err)
	require.Len(t, st.Entries, 2, "an unsynced write survived a crash")

	d.Fsync = true
	require.NoError(t, d.Save(nil, []*raftpb.Entry{ent(2), ent(3)}))
	d.Crash()
	st, err = d.Load()
	require.NoError(t, err)
	require.Len(t, st.Entries, 3, "a synced write was lost")
}

// TestFollowerCatchesUpAfterLeaderCompactsPastItsSnapshot: a follower too
// far behind for the leader's log is sent a snapshot; while it is on its
// way the leader compacts past it. Applied, the snapshot still leaves the
// follower short of the leader's first entry, so raft kept it waiting for
// a snapshot that was already delivered — for good, until the leader
// reported the snapshot done and sent a newer one.
func TestFollowerCatchesUpAfterLeaderCompactsPastItsSnapshot(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	c.lagBehindCompaction(t, 3)
	snap := c.holdSnapshot(t, 3)
	c.lagBehindCompaction(t, 3)
	require.NoError(t, c.nodes[3].log.Step(snap))
	c.heartbeats(t, 50)
	require.Equal(t, c.nodes[1].log.Applied(), c.nodes[3].log.Applied(), "the follower did not catch up")
	// Raft's storage holds no snapshot data: the leader read it back from
	// its disk to send it.
	require.Equal(t, c.compactedState, c.nodes[3].restored)
}

// TestLostSnapshotIsSentAgain: a snapshot lost on its way is sent again
// once the follower has waited several election timeouts for it.
func TestLostSnapshotIsSentAgain(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	c.lagBehindCompaction(t, 3)
	c.holdSnapshot(t, 3) // and lose it
	c.heartbeats(t, snapshotLostAfter*10)
	require.Equal(t, c.nodes[1].log.Applied(), c.nodes[3].log.Applied(), "the follower did not catch up")
}

// lagBehindCompaction cuts follower off while the leader, replica 1, logs
// entries and compacts its log past them.
func (c *testCluster) lagBehindCompaction(t *testing.T, follower uint64) {
	c.down[follower] = true
	for range 10 {
		require.NoError(t, c.nodes[1].log.Propose([][]byte{[]byte("x")}))
		c.settle(t)
	}
	leader := c.nodes[1]
	state := fmt.Sprintf("state@%d", leader.log.Applied())
	c.compactedState = state
	require.NoError(t, leader.log.Compact(leader.log.applied, 0, func() io.WriterTo { return strings.NewReader(state) }))
	require.NoError(t, leader.ready()) // takes the written snapshot in
	require.Equal(t, leader.log.Applied()+1, leader.log.FirstIndex(), "the leader did not compact")
	c.down[follower] = false
}

// holdSnapshot runs heartbeats until the leader, replica 1, sends follower
// a snapshot, and returns the snapshot undelivered.
func (c *testCluster) holdSnapshot(t *testing.T, follower uint64) *raftpb.Message {
	for range 100 {
		c.nodes[1].log.Tick()
		var held *raftpb.Message
		for id := uint64(1); id <= 3; id++ {
			n := c.nodes[id]
			require.NoError(t, n.ready())
			for _, m := range n.out {
				if m.GetType() == raftpb.MessageType_MsgSnap && m.GetTo() == follower {
					held = m
					continue
				}
				_ = c.nodes[m.GetTo()].log.Step(m)
			}
			n.out = nil
		}
		if held != nil {
			return held
		}
	}
	t.Fatal("no snapshot was sent")
	return nil
}

// heartbeats ticks the leader, replica 1, n times, settling after each.
func (c *testCluster) heartbeats(t *testing.T, n int) {
	for range n {
		c.nodes[1].log.Tick()
		c.settle(t)
	}
}

// TestRestartAfterASnapshotSavedAheadOfItsCommit: a snapshot from the
// leader and the hard state that commits it are two writes (Write.Do saves
// the snapshot, then the hard state); a crash between them leaves a disk
// whose commit index is behind its snapshot, which the replica must still
// restart from: the snapshot covers committed entries only.
func TestRestartAfterASnapshotSavedAheadOfItsCommit(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	for range 3 {
		require.NoError(t, c.nodes[1].log.Propose([][]byte{[]byte("x")}))
		c.settle(t)
	}
	disk := c.nodes[2].disk
	commit := disk.hs.GetCommit()
	snap := &raftpb.Snapshot{Data: []byte("state"), Metadata: &raftpb.SnapshotMetadata{
		Index: new(commit + 5), Term: new(disk.hs.GetTerm()), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}}
	require.NoError(t, disk.SaveSnapshot(snap))
	disk.Crash() // before the hard state committing the snapshot is saved

	var n *testNode
	require.NotPanics(t, func() {
		var err error
		n, err = newTestNode(t, 2, disk, false)
		require.NoError(t, err)
	})
	require.Equal(t, commit+5, n.log.Committed())
	require.Equal(t, commit+5, n.log.Applied())
}

// TestCompactionWaitsForTheSavedCommit: raft applies an entry once it is
// durable here, possibly before the hard state that commits it is; a
// compaction at the applied index waits for that hard state, so that a
// crash never leaves a snapshot ahead of the saved commit index.
func TestCompactionWaitsForTheSavedCommit(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	leader := c.nodes[1]
	require.NoError(t, leader.log.Propose([][]byte{[]byte("x")}))
	require.NoError(t, leader.ready()) // the entry is on the leader's disk
	for _, m := range leader.out {
		require.NoError(t, c.nodes[m.GetTo()].log.Step(m))
	}
	leader.out = nil
	var acks []*raftpb.Message
	for _, id := range []uint64{2, 3} {
		require.NoError(t, c.nodes[id].ready())
		acks = append(acks, c.nodes[id].out...)
		c.nodes[id].out = nil
	}
	// The acknowledgements commit the entry; its hard state is held back.
	leader.hold = true
	for _, m := range acks {
		require.NoError(t, leader.log.Step(m))
	}
	require.NoError(t, leader.ready())
	applied := leader.log.Applied()
	require.Greater(t, applied, leader.disk.hs.GetCommit(), "the entry applied before its commit was saved")
	require.False(t, leader.log.CanCompact(leader.log.applied))
	require.NoError(t, leader.log.Compact(leader.log.applied, 0, func() io.WriterTo { return strings.NewReader("state") }))

	crashed := &watchedDisk{MemDisk: leader.disk.MemDisk}
	crashed.Crash()
	require.NotPanics(t, func() {
		n, err := newTestNode(t, 1, crashed, false)
		require.NoError(t, err)
		require.Less(t, n.log.FirstIndex(), applied, "a snapshot at %d was saved ahead of its commit", applied)
	})

	require.NoError(t, leader.release())
	require.True(t, leader.log.CanCompact(leader.log.applied))
	require.NoError(t, leader.log.Compact(leader.log.applied, 0, func() io.WriterTo { return strings.NewReader("state") }))
	require.NoError(t, leader.ready())
	require.Equal(t, applied+1, leader.log.FirstIndex())
}

// TestGrantingAVoteRestartsTheElectionTimer: raft's rule (§5.2) is that a
// follower campaigns when its election timeout passes without hearing from
// the leader *or granting a vote*. A replica that had never heard of a
// leader voted for a candidate a tick before its own timeout and, the
// winner's first append still on its way, campaigned at once and deposed
// it: at startup under load (curp-ho, 100 % weak, 3 × 32 sessions) one
// run in four elected twice.
func TestGrantingAVoteRestartsTheElectionTimer(t *testing.T) {
	c := newTestCluster(t)
	voter := c.nodes[2]
	for voter.log.elapsed < voter.log.timeout-2 {
		voter.log.Tick()
	}
	// The winner's appends and heartbeats are late: only the election
	// gets through.
	c.drop = func(m *raftpb.Message) bool {
		return m.GetTo() == 2 && (m.GetType() == raftpb.MessageType_MsgApp || m.GetType() == raftpb.MessageType_MsgHeartbeat)
	}
	c.elect(t, 1)
	require.Equal(t, raft.StateFollower, voter.log.rn.Status().RaftState)
	for range voter.log.cfg.ElectionTicks - 1 {
		voter.log.Tick()
		require.NoError(t, voter.ready())
		require.Equal(t, raft.StateFollower, voter.log.rn.Status().RaftState,
			"campaigned %d ticks after voting, its timeout %d ticks", voter.log.elapsed, voter.log.timeout)
	}
}
