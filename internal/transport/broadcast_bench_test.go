package transport

import (
	"testing"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// BenchmarkSendAllBroadcast is a client's round: 16 requests, each to
// three replicas, in one SendAll; ns/op is the sender's cost per round.
func BenchmarkSendAllBroadcast(b *testing.B) {
	peers := map[wire.NodeID]Peer{}
	for id := wire.NodeID(1); id <= 3; id++ {
		peers[id] = Peer{Addr: discardServer(b)}
	}
	a := start(b, Config{Self: wire.FirstClientID, Peers: peers}, func(wire.NodeID, wire.Message) {})
	for id := range peers {
		waitConnected(b, a, id)
	}
	var envs []wire.Envelope
	for i := range 16 {
		m := request(uint64(i + 1))
		for id := wire.NodeID(1); id <= 3; id++ {
			envs = append(envs, wire.Envelope{To: id, Msg: m})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		a.SendAll(envs)
	}
	if d := a.Stats().Dropped; d > 0 {
		b.Logf("%d dropped (queues full)", d)
	}
}
