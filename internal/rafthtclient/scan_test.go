package rafthtclient

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func scanReply(id wire.OpID, applied uint64, r wire.TxnOpResult) *wire.Reply {
	return &wire.Reply{Kind: wire.ReplyWeak, ID: id, Ok: true, Found: true,
		Value: wire.AppendScanResult(nil, &r), Slot: applied, Applied: applied}
}

func scanResult(t *testing.T, v []byte) wire.TxnOpResult {
	res, err := wire.DecodeTxnResult(v)
	require.NoError(t, err)
	require.Len(t, res.Results, 1)
	return res.Results[0]
}

// TestRaftHTScanShowsItsOwnWrite: a lagging replica's scan misses the
// session's write, which the cache adds; once the replica caught up, its
// answer stands.
func TestRaftHTScanShowsItsOwnWrite(t *testing.T) {
	c := newClient(RaftHT)
	write(t, c, "k", "mine", 7)
	id := c.Submit(1, wire.NewScan(wire.Weak, wire.TxnOp{Key: "a", End: "z"}))
	require.NotNil(t, sent(c)[closest], "a weak scan goes to the closest replica")
	c.Advance()
	c.Step(closest, scanReply(id, 5, wire.TxnOpResult{KVs: []wire.KeyValue{{Key: "b", Value: []byte("theirs")}}, Count: 1}))
	done := completions(c)
	require.Len(t, done, 1)
	got := scanResult(t, done[0].Value)
	require.Equal(t, []wire.KeyValue{{Key: "b", Value: []byte("theirs")}, {Key: "k", Value: []byte("mine")}}, got.KVs)
	require.EqualValues(t, 2, got.Count)
	require.EqualValues(t, 7, done[0].Slot, "the scan's state holds the session's write")
}

// TestRaftHTScanCutPastItsOwnWriteGoesToTheLeader: when the replica's
// answer was cut by its limit, what the session's write does to it
// depends on keys the answer does not show: the scan is asked of the
// leader, whose state holds the write.
func TestRaftHTScanCutPastItsOwnWriteGoesToTheLeader(t *testing.T) {
	c := newClient(RaftHT)
	write(t, c, "k", "mine", 7)
	id := c.Submit(1, wire.NewScan(wire.Weak, wire.TxnOp{Key: "a", End: "z", Limit: 1}))
	sent(c)
	c.Advance()
	c.Step(closest, scanReply(id, 5, wire.TxnOpResult{KVs: []wire.KeyValue{{Key: "b", Value: []byte("theirs")}}, Count: 3, More: true}))
	require.NotNil(t, sent(c)[leader], "the scan goes to the leader")
	require.Empty(t, completions(c))
	c.Step(leader, scanReply(id, 8, wire.TxnOpResult{KVs: []wire.KeyValue{{Key: "b", Value: []byte("theirs")}}, Count: 3, More: true}))
	done := completions(c)
	require.Len(t, done, 1)
	require.Equal(t, "theirs", string(scanResult(t, done[0].Value).KVs[0].Value))
}

// TestRaftHTScanSetsTheBarrier: a scan reads keys the cache cannot list;
// a later read from an older state than the scan's goes to the leader
// rather than go back in time.
func TestRaftHTScanSetsTheBarrier(t *testing.T) {
	c := newClient(RaftHT)
	id := c.Submit(1, wire.NewScan(wire.Weak, wire.TxnOp{Key: "a", End: "z"}))
	sent(c)
	c.Advance()
	c.Step(closest, scanReply(id, 9, wire.TxnOpResult{KVs: []wire.KeyValue{{Key: "b", Value: []byte("new")}}, Count: 1}))
	require.Len(t, completions(c), 1)
	id = c.Submit(1, wire.Op{Level: wire.Weak, Kind: wire.Get, Key: "b"})
	sent(c)
	c.Advance()
	c.Step(closest, &wire.Reply{Kind: wire.ReplyWeak, ID: id, Ok: true, Found: true, Value: []byte("old"), Slot: 2, Applied: 4})
	require.NotNil(t, sent(c)[leader], "an older state than the scan's is not used")
	require.Empty(t, completions(c))
}
