package transport

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestRoundTrip(t *testing.T) {
	const server, client = wire.NodeID(1), wire.FirstClientID + 5
	tests := []struct {
		name string
		msg  wire.Message
	}{
		{"request", request(42)},
		{"reply", &wire.Reply{Kind: wire.ReplySync, ID: wire.OpID{Session: 7, Seq: 42}, Term: 3, Leader: 1,
			Ok: true, Found: true, Value: []byte("value"), Slot: 9, Applied: 8, Deps: []uint64{1, 5}}},
		{"raft", &wire.Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgApp.Enum(), To: proto.Uint64(2), From: proto.Uint64(1),
			Term: proto.Uint64(3), Index: proto.Uint64(10), LogTerm: proto.Uint64(3), Commit: proto.Uint64(9),
			Entries: []*raftpb.Entry{{Term: proto.Uint64(3), Index: proto.Uint64(11), Data: []byte("op")}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The server echoes on the connection the client opened, which
			// it can only find through the client's Hello.
			var srv atomic.Pointer[Transport]
			seen := newInbox()
			b, err := New(Config{Self: server, Listen: "127.0.0.1:0"}, func(from wire.NodeID, m wire.Message) {
				seen.handle(from, m)
				srv.Load().Send(from, m)
			})
			require.NoError(t, err)
			srv.Store(b)
			replies := newInbox()
			a, err := New(Config{Self: client, Peers: map[wire.NodeID]Peer{server: {Addr: b.Addr().String()}}}, replies.handle)
			require.NoError(t, err)
			waitConnected(t, a, server)

			a.Send(server, tt.msg)
			got := seen.next(t)
			require.Equal(t, client, got.from)
			requireSame(t, tt.msg, got.m)
			echo := replies.next(t)
			require.Equal(t, server, echo.from)
			requireSame(t, tt.msg, echo.m)

			require.NoError(t, a.Close())
			require.NoError(t, b.Close())
			goleak.VerifyNone(t)
		})
	}
}

// Replicas dial each other, so each sends on its own dialed connection while
// reading the other's.
func TestMutualPeers(t *testing.T) {
	inA, inB := newInbox(), newInbox()
	a := listen(t, 1, 0, nil, inA.handle)
	b := start(t, Config{Self: 2, Listen: "127.0.0.1:0", Peers: map[wire.NodeID]Peer{1: {Addr: a.Addr().String()}}}, inB.handle)
	a2 := start(t, Config{Self: 1, Peers: map[wire.NodeID]Peer{2: {Addr: b.Addr().String()}}}, inA.handle)
	waitConnected(t, b, 1)
	waitConnected(t, a2, 2)

	b.Send(1, request(1))
	a2.Send(2, request(2))
	require.Equal(t, wire.NodeID(2), inA.next(t).from)
	require.Equal(t, wire.NodeID(1), inB.next(t).from)
}

func TestSendWithoutConnectionDrops(t *testing.T) {
	a := listen(t, 1, 0, nil, func(wire.NodeID, wire.Message) {})
	a.Send(99, request(1))
	a.SendAll([]wire.Envelope{{To: 98, Msg: request(2)}, {To: 99, Msg: request(3)}})
	require.Equal(t, Stats{Dropped: 3}, a.Stats())
	require.False(t, a.Connected(99))
}

// A node that reconnects is answered on its newest connection.
func TestLatestAcceptedConnectionWins(t *testing.T) {
	const client = wire.FirstClientID
	b := listen(t, 1, 0, nil, func(wire.NodeID, wire.Message) {})
	peers := map[wire.NodeID]Peer{1: {Addr: b.Addr().String()}}
	old, fresh := newInbox(), newInbox()
	a1 := start(t, Config{Self: client, Peers: peers}, old.handle)
	waitConnected(t, a1, 1)
	a1.Send(1, request(1)) // once b has read this, a1's connection is registered
	require.Eventually(t, func() bool { return b.Stats().Received == 1 }, waitFor, time.Millisecond)

	a2 := start(t, Config{Self: client, Peers: peers}, fresh.handle)
	waitConnected(t, a2, 1)
	a2.Send(1, request(2))
	require.Eventually(t, func() bool { return b.Stats().Received == 2 }, waitFor, time.Millisecond)

	b.Send(client, request(3))
	requireSame(t, request(3), fresh.next(t).m)
	require.Empty(t, old.ch)
}

func TestSendAllKeepsPerDestinationOrder(t *testing.T) {
	// Three destinations take the grouped path, twenty the per-run path.
	for _, dests := range []int{3, 20} {
		inboxes := map[wire.NodeID]*inbox{}
		peers := map[wire.NodeID]Peer{}
		for i := range dests {
			id := wire.NodeID(i + 1)
			inboxes[id] = newInbox()
			srv := listen(t, id, 0, nil, inboxes[id].handle)
			peers[id] = Peer{Addr: srv.Addr().String()}
		}
		a := start(t, Config{Self: wire.FirstClientID, Peers: peers}, func(wire.NodeID, wire.Message) {})
		for id := range peers {
			waitConnected(t, a, id)
		}
		const perDest = 10
		var envs []wire.Envelope
		for seq := range uint64(perDest) {
			for id := range peers {
				envs = append(envs, wire.Envelope{To: id, Msg: request(seq)})
			}
		}
		a.SendAll(envs)
		for _, in := range inboxes {
			for seq := range uint64(perDest) {
				d := in.next(t)
				require.Equal(t, wire.FirstClientID, d.from)
				require.Equal(t, seq, d.m.(*wire.Request).Op.ID.Seq)
			}
		}
		require.Equal(t, uint64(len(envs)), a.Stats().Sent)
	}
}

func TestConfigValidation(t *testing.T) {
	dm := NewDelayModel([][]time.Duration{{0, 1}, {1, 0}}, 0, 1)
	h := func(wire.NodeID, wire.Message) {}
	tests := []struct {
		name string
		cfg  Config
		h    Handler
	}{
		{"nil handler", Config{Self: 1, Listen: "127.0.0.1:0"}, nil},
		{"nothing to do", Config{Self: 1}, h},
		{"self as peer", Config{Self: 1, Peers: map[wire.NodeID]Peer{1: {Addr: "x:1"}}}, h},
		{"peer without address", Config{Self: 1, Peers: map[wire.NodeID]Peer{2: {}}}, h},
		{"site outside matrix", Config{Self: 1, Site: 2, Listen: "127.0.0.1:0", Delay: dm}, h},
		{"peer site outside matrix", Config{Self: 1, Delay: dm, Peers: map[wire.NodeID]Peer{2: {Addr: "x:1", Site: 5}}}, h},
		{"negative flush delay", Config{Self: 1, Listen: "127.0.0.1:0", FlushDelay: -1}, h},
		{"bad listen address", Config{Self: 1, Listen: "no-such-host-really:99999"}, h},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := New(tt.cfg, tt.h)
			require.Error(t, err)
			require.Nil(t, tr)
		})
	}
}
