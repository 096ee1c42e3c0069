package raftlog

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3/raftpb"
)

// heldDisk keeps its finished compactions from the log until released, as
// a real disk does while it writes one in the background.
type heldDisk struct {
	*watchedDisk
	hold bool
}

func (d *heldDisk) Compacted() *raftpb.Snapshot {
	if d.hold {
		return nil
	}
	return d.watchedDisk.Compacted()
}

func (c *testCluster) propose(t *testing.T, n int) {
	for range n {
		require.NoError(t, c.nodes[1].log.Propose([][]byte{[]byte("x")}))
		c.settle(t)
	}
}

func (c *testCluster) compact(t *testing.T) {
	leader := c.nodes[1]
	state := fmt.Sprintf("state@%d", leader.log.Applied())
	c.compactedState = state
	require.NoError(t, leader.log.Compact(leader.log.applied, 0, func() io.WriterTo { return strings.NewReader(state) }))
	require.NoError(t, leader.ready())
}

// TestTrimmedFollowerGetsAFreshSnapshot: the leader trimmed from memory
// entries a lagging follower needs, past its newest snapshot. Sending that
// snapshot would leave the follower a gap it could never fill (raft would
// send it again and again); the leader refuses, asks for a snapshot that
// joins its log, and sends that one.
func TestTrimmedFollowerGetsAFreshSnapshot(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	c.down[3] = true
	c.propose(t, 10)
	c.compact(t)
	older := c.compactedState
	c.propose(t, 10)
	leader := c.nodes[1]
	require.NoError(t, leader.log.Trim(2))
	require.Equal(t, leader.log.Applied()-1, leader.log.FirstIndex(), "the leader did not trim")
	c.down[3] = false
	c.heartbeats(t, 5)
	require.True(t, leader.log.SnapshotWanted(), "the leader did not ask for a snapshot")
	require.NotEqual(t, leader.log.Applied(), c.nodes[3].log.Applied())
	c.compact(t)
	require.False(t, leader.log.SnapshotWanted())
	c.heartbeats(t, 50)
	require.Equal(t, leader.log.Applied(), c.nodes[3].log.Applied(), "the follower did not catch up")
	require.NotEqual(t, older, c.nodes[3].restored)
	require.Equal(t, c.compactedState, c.nodes[3].restored)
}

// TestTrimStopsAtASnapshotBeingWritten: while a snapshot is written in the
// background, entries after its index stay, so that once written it can be
// installed at an index the log still holds.
func TestTrimStopsAtASnapshotBeingWritten(t *testing.T) {
	c := newTestCluster(t)
	disk := &heldDisk{watchedDisk: &watchedDisk{MemDisk: NewMemDisk()}, hold: true}
	n, err := newTestNode(t, 1, disk.watchedDisk, true)
	require.NoError(t, err)
	n.log.disk = disk
	c.nodes[1] = n
	c.elect(t, 1)
	c.propose(t, 5)
	c.compact(t)
	at := n.log.Applied()
	c.propose(t, 10)
	require.NoError(t, n.log.Trim(0))
	require.Equal(t, at+1, n.log.FirstIndex(), "trimmed past the snapshot being written")
	disk.hold = false
	require.NoError(t, n.ready()) // installs it
	snap, err := n.log.storage.Snapshot()
	require.NoError(t, err)
	require.Equal(t, at, snap.GetMetadata().GetIndex())
	require.NoError(t, n.log.Trim(0))
	require.Equal(t, n.log.Applied()+1, n.log.FirstIndex())
}
