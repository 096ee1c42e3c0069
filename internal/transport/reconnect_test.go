package transport

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestReconnect(t *testing.T) {
	const server, client = wire.NodeID(1), wire.FirstClientID
	first := newInbox()
	b1 := listen(t, server, 0, nil, first.handle)
	addr := b1.Addr().String()
	replies := newInbox()
	a := start(t, Config{Self: client, Peers: map[wire.NodeID]Peer{server: {Addr: addr}}}, replies.handle)
	waitConnected(t, a, server)
	a.Send(server, request(1))
	requireSame(t, request(1), first.next(t).m)

	require.NoError(t, b1.Close())
	require.Eventually(t, func() bool { return !a.Connected(server) }, waitFor, time.Millisecond)
	a.Send(server, request(2))
	require.EqualValues(t, 1, a.Stats().Dropped, "a message to a node that is down is dropped")

	// A new server on the same address must see a Hello first, or it could
	// not route its reply back to the client.
	var b2 atomic.Pointer[Transport]
	second := newInbox()
	tr, err := New(Config{Self: server, Listen: addr}, func(from wire.NodeID, m wire.Message) {
		second.handle(from, m)
		b2.Load().Send(from, m)
	})
	require.NoError(t, err)
	b2.Store(tr)
	t.Cleanup(func() { tr.Close() })
	waitConnected(t, a, server)

	a.Send(server, request(3))
	got := second.next(t)
	require.Equal(t, client, got.from)
	requireSame(t, request(3), got.m)
	requireSame(t, request(3), replies.next(t).m)
}

// Close must stop a dialer that is backing off against a peer that never
// comes up; goleak in TestMain checks nothing is left behind.
func TestCloseWhileRedialing(t *testing.T) {
	addr := deadAddr(t)
	a, err := New(Config{Self: wire.FirstClientID, Peers: map[wire.NodeID]Peer{1: {Addr: addr}}}, func(wire.NodeID, wire.Message) {})
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // several failed dials
	require.False(t, a.Connected(1))
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "Close is idempotent")
}

// deadAddr returns a loopback address nobody listens on.
func deadAddr(t *testing.T) string {
	b := listen(t, 1, 0, nil, func(wire.NodeID, wire.Message) {})
	addr := b.Addr().String()
	require.NoError(t, b.Close())
	return addr
}
