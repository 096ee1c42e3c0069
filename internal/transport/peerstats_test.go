package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestPeerStats follows three frames over a delayed link: held in the
// sender's queue until due, then counted as sent by the sender and as
// received by a listener that knows the sender only as a client.
func TestPeerStats(t *testing.T) {
	const delay = 300 * ms
	in := newInbox()
	b := listen(t, 2, 1, nil, in.handle)
	a := start(t, Config{Self: 1, Site: 0,
		Peers: map[wire.NodeID]Peer{2: {Addr: b.Addr().String(), Site: 1}},
		Delay: NewDelayModel([][]time.Duration{{0, delay}, {delay, 0}}, 0, 1)}, func(wire.NodeID, wire.Message) {})
	waitConnected(t, a, 2)

	size := 0
	for seq := range uint64(3) {
		m := request(seq)
		size += len(wire.AppendFrame(nil, m))
		a.Send(2, m)
	}
	got := a.PeerStats()
	require.Equal(t, []PeerStats{
		{Peer: 2, Connections: 1, QueuedBytes: size, QueuedFrames: 3},
		{Peer: Clients},
	}, got, "frames wait out the delay in the queue")

	for range 3 {
		in.next(t)
	}
	require.Eventually(t, func() bool { return a.PeerStats()[0].BytesSent == uint64(size) }, waitFor, ms)
	require.Equal(t, PeerStats{Peer: 2, Connections: 1, BytesSent: uint64(size)}, a.PeerStats()[0])
	require.Equal(t, []PeerStats{{Peer: Clients, Connections: 1, BytesReceived: uint64(size)}}, b.PeerStats(),
		"a node that is not a configured peer counts as a client")
}
