package transport

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// BenchmarkSendRecv measures one-way throughput of small requests over
// loopback, from Send to the receiving handler. Allocations include the
// receiver's decoding, which must build a fresh message per frame.
func BenchmarkSendRecv(b *testing.B) {
	for _, bc := range []struct {
		name  string
		batch int
		flush time.Duration
	}{
		{"Send", 1, 0},
		{"Send/flush=50us", 1, 50 * time.Microsecond},
		{"SendAll/batch=64", 64, 0},
	} {
		b.Run(bc.name, func(b *testing.B) { benchSendRecv(b, bc.batch, bc.flush) })
	}
}

func benchSendRecv(b *testing.B, batch int, flush time.Duration) {
	// window bounds messages in flight, so the sender cannot outrun the
	// receiver until queues hit their limit and drop.
	const window = 1 << 14
	var got atomic.Int64
	srv := listen(b, 1, 0, nil, func(wire.NodeID, wire.Message) { got.Add(1) })
	a := start(b, Config{Self: wire.FirstClientID, FlushDelay: flush,
		Peers: map[wire.NodeID]Peer{1: {Addr: srv.Addr().String()}}}, func(wire.NodeID, wire.Message) {})
	waitConnected(b, a, 1)
	m := request(1)
	envs := make([]wire.Envelope, batch)
	for i := range envs {
		envs[i] = wire.Envelope{To: 1, Msg: m}
	}
	b.ReportAllocs()
	start := time.Now()
	w0 := a.Stats().Writes
	sent := 0
	for sent < b.N {
		for sent-int(got.Load()) > window {
			time.Sleep(20 * time.Microsecond)
		}
		if batch == 1 {
			a.Send(1, m)
			sent++
		} else {
			k := min(batch, b.N-sent)
			a.SendAll(envs[:k])
			sent += k
		}
	}
	for got.Load() < int64(b.N) {
		time.Sleep(20 * time.Microsecond)
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(b.N)/float64(max(a.Stats().Writes-w0, 1)), "msgs/write")
	if d := a.Stats().Dropped; d > 0 {
		b.Fatalf("%d messages dropped", d)
	}
}
