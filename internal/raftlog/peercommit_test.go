package raftlog

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3/raftpb"
)

// A follower that gets the leader's entries but never the leader's word
// that they committed learns it from the other follower's acknowledgement,
// and applies them.
func TestFollowerLearnsCommitFromPeers(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	// From now on replica 2 hears the leader's entries, never its commits.
	c.drop = func(m *raftpb.Message) bool {
		return m.GetFrom() == 1 && m.GetTo() == 2 && len(m.GetEntries()) == 0
	}
	before := c.nodes[2].log.Committed()
	index := c.nodes[1].log.LastIndex() + 1
	require.NoError(t, c.nodes[1].log.Propose([][]byte{[]byte("x")}))
	c.settle(t)
	require.Equal(t, index, c.nodes[1].log.Committed())
	require.Equal(t, index, c.nodes[2].log.Committed(), "replica 2 did not learn the commit (it knew %d)", before)
	require.Contains(t, c.nodes[2].applied, index)
}

// A follower counts its own log only once written: with the leader's and
// its own writes held back, one other follower's acknowledgement is one
// write of three, not a majority.
func TestPeerAcksCountOnlyWrittenLogs(t *testing.T) {
	c := newTestCluster(t)
	c.elect(t, 1)
	c.nodes[1].hold, c.nodes[2].hold = true, true
	index := c.nodes[1].log.LastIndex() + 1
	require.NoError(t, c.nodes[1].log.Propose([][]byte{[]byte("x")}))
	c.settle(t)
	require.Equal(t, index, c.nodes[3].log.LastIndex())
	require.Equal(t, index, c.nodes[2].log.LastIndex())
	require.Less(t, c.nodes[2].log.Committed(), index, "committed on one write of three")

	require.NoError(t, c.nodes[2].release())
	c.settle(t)
	require.Equal(t, index, c.nodes[2].log.Committed(), "two writes of three and the follower did not know")
}

func TestPeerAcksMajority(t *testing.T) {
	p := newPeerAcks(1, []uint64{1, 2, 3, 4, 5})
	p.wroteOwn(3, 10, 3)
	p.note(2, 3, 12)
	_, i := p.commitIndex()
	require.Zero(t, i, "two of five")
	p.note(4, 3, 11)
	term, i := p.commitIndex()
	require.Equal(t, [2]uint64{3, 10}, [2]uint64{term, i}, "the third highest of 10, 11, 12")
	_, i = p.commitIndex()
	require.Zero(t, i, "nothing changed")

	p.note(5, 2, 20) // an older term's acknowledgement
	p.note(9, 3, 20) // not a voter
	_, i = p.commitIndex()
	require.Zero(t, i)

	p.wroteOwn(3, 30, 2) // the log's last entry is of an older term
	_, i = p.commitIndex()
	require.Zero(t, i)

	p.note(2, 4, 40) // a new term forgets the old one's writes
	p.note(3, 4, 41)
	_, i = p.commitIndex()
	require.Zero(t, i, "two of five in term 4")
	p.wroteOwn(4, 42, 4)
	term, i = p.commitIndex()
	require.Equal(t, [2]uint64{4, 40}, [2]uint64{term, i})
}
