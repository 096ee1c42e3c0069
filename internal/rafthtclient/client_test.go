package rafthtclient

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

const (
	leader  wire.NodeID = 1
	closest wire.NodeID = 2
)

func newClient(p Policy) *Client {
	return New(p, []wire.NodeID{1, 2, 3}, closest, 5)
}

// sent returns the requests the client sent since the last call, by
// destination.
func sent(c *Client) map[wire.NodeID]*wire.Request {
	out, _ := c.Ready()
	m := map[wire.NodeID]*wire.Request{}
	for _, e := range out {
		m[e.To] = e.Msg.(*wire.Request)
	}
	return m
}

func completions(c *Client) []clientcore.Completion {
	_, done := c.Ready()
	got := append([]clientcore.Completion(nil), done...)
	c.Advance()
	return got
}

// write completes a weak put of key through the leader at slot.
func write(t *testing.T, c *Client, key, value string, slot uint64) {
	id := c.Submit(1, wire.Op{Level: wire.Weak, Kind: wire.Put, Key: key, Value: []byte(value)})
	c.Advance()
	c.Step(leader, &wire.Reply{Kind: wire.ReplySync, ID: id, Ok: true, Slot: slot, Applied: slot, Leader: leader, Term: 1})
	done := completions(c)
	require.Len(t, done, 1)
	require.Equal(t, clientcore.PathWeak, done[0].Path)
}

// TestRaftHTReadsItsOwnWriteFromALaggingReplica: the replica's answer is
// older than the session's write, and the cache's value is returned.
func TestRaftHTReadsItsOwnWriteFromALaggingReplica(t *testing.T) {
	c := newClient(RaftHT)
	write(t, c, "k", "mine", 7)
	id := c.Submit(1, wire.Op{Level: wire.Weak, Kind: wire.Get, Key: "k"})
	req := sent(c)[closest]
	require.NotNil(t, req)
	require.Zero(t, req.MinApplied, "Raft-HT sends no floor")
	require.Zero(t, req.Flags&wire.FlagServeNow)
	c.Advance()
	c.Step(closest, &wire.Reply{Kind: wire.ReplyWeak, ID: id, Ok: true, Found: true, Value: []byte("old"), Slot: 3, Applied: 5})
	done := completions(c)
	require.Len(t, done, 1)
	require.Equal(t, "mine", string(done[0].Value))
	require.EqualValues(t, 7, done[0].Slot)

	// A replica that caught up answers with its own, newer value.
	id = c.Submit(1, wire.Op{Level: wire.Weak, Kind: wire.Get, Key: "k"})
	c.Advance()
	c.Step(closest, &wire.Reply{Kind: wire.ReplyWeak, ID: id, Ok: true, Found: true, Value: []byte("theirs"), Slot: 9, Applied: 9})
	done = completions(c)
	require.Equal(t, "theirs", string(done[0].Value))
}

// TestMongoStampsTheFloor: a weak read carries the highest slot the
// session observed, and waits for the replica's answer.
func TestMongoStampsTheFloor(t *testing.T) {
	c := newClient(Mongo)
	write(t, c, "k", "mine", 7)
	c.Submit(1, wire.Op{Level: wire.Weak, Kind: wire.Get, Key: "other"})
	req := sent(c)[closest]
	require.EqualValues(t, 7, req.MinApplied)
	require.Zero(t, req.Flags&wire.FlagServeNow)
}

// TestPileusRedirectsToTheLeader: a replica behind the floor refuses, and
// the read goes to the leader, without asking it to answer at once.
func TestPileusRedirectsToTheLeader(t *testing.T) {
	c := newClient(PileusHT)
	write(t, c, "k", "mine", 7)
	id := c.Submit(1, wire.Op{Level: wire.Weak, Kind: wire.Get, Key: "k"})
	req := sent(c)[closest]
	require.NotZero(t, req.Flags&wire.FlagServeNow)
	c.Advance()
	c.Step(closest, wire.BehindReply(id, 4))
	req = sent(c)[leader]
	require.NotNil(t, req, "the read goes to the leader")
	require.Zero(t, req.Flags&wire.FlagServeNow)
	require.EqualValues(t, 7, req.MinApplied)
	c.Advance()
	c.Step(leader, &wire.Reply{Kind: wire.ReplyWeak, ID: id, Ok: true, Found: true, Value: []byte("mine"), Slot: 7, Applied: 8})
	require.Len(t, completions(c), 1)
}

// TestPileusWritesAreStrong: Pileus sends every write as a strong one.
func TestPileusWritesAreStrong(t *testing.T) {
	c := newClient(Pileus)
	c.Submit(1, wire.Op{Level: wire.Weak, Kind: wire.Put, Key: "k", Value: []byte("v")})
	for _, req := range sent(c) {
		require.Equal(t, wire.Strong, req.Op.Level)
	}
}
