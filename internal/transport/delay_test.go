package transport

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

const ms = time.Millisecond

func TestDelayModelSample(t *testing.T) {
	oneWay := [][]time.Duration{{0, 5 * ms, 2 * ms}, {5 * ms, 0, 1 * ms}, {2 * ms, 1 * ms, 0}}
	tests := []struct {
		name     string
		jitter   time.Duration
		from, to uint32
		lo, hi   time.Duration
	}{
		{"same site stays zero under jitter", 4 * ms, 1, 1, 0, 0},
		{"no jitter is exact", 0, 0, 1, 5 * ms, 5 * ms},
		{"jitter spreads both ways", 4 * ms, 0, 1, 1 * ms, 9 * ms},
		{"jitter larger than delay clamps at zero", 4 * ms, 0, 2, 0, 6 * ms},
		{"site outside matrix is zero", 4 * ms, 0, 7, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDelayModel(oneWay, tt.jitter, 1)
			var lo, hi time.Duration = time.Hour, -1
			for range 10000 {
				v := d.Sample(tt.from, tt.to)
				lo, hi = min(lo, v), max(hi, v)
			}
			require.GreaterOrEqual(t, lo, tt.lo)
			require.LessOrEqual(t, hi, tt.hi)
			if tt.jitter > 0 && tt.lo < tt.hi {
				// The draws should cover most of the range, not sit in a corner.
				require.Less(t, lo, tt.lo+(tt.hi-tt.lo)/10)
				require.Greater(t, hi, tt.hi-(tt.hi-tt.lo)/10)
			}
		})
	}
}

func TestDelayModelSeedRepeats(t *testing.T) {
	oneWay := [][]time.Duration{{0, 50 * ms}, {50 * ms, 0}}
	a, b := NewDelayModel(oneWay, 10*ms, 42), NewDelayModel(oneWay, 10*ms, 42)
	for range 100 {
		require.Equal(t, a.Sample(0, 1), b.Sample(0, 1))
	}
}

func TestDelayModelConcurrentSample(t *testing.T) {
	d := NewDelayModel([][]time.Duration{{0, 5 * ms}, {5 * ms, 0}}, 4*ms, 1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				v := d.Sample(0, 1)
				if v < ms || v > 9*ms {
					t.Errorf("sample %v outside [1ms, 9ms]", v)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestNewDelayModelRejectsBrokenMatrix(t *testing.T) {
	require.Panics(t, func() { NewDelayModel([][]time.Duration{{0, 1}, {1}}, 0, 1) })
	require.Panics(t, func() { NewDelayModel([][]time.Duration{{0, -1}, {1, 0}}, 0, 1) })
	require.Panics(t, func() { NewDelayModel([][]time.Duration{{0}}, -1, 1) })
}

// Jitter draws a fresh delay per frame, yet frames must still leave in the
// order they were sent.
func TestFIFOUnderJitter(t *testing.T) {
	const n, every = 10000, 97
	const base, jitter = 5 * ms, 4 * ms
	tests := []struct {
		name string
		send func(a *Transport, to wire.NodeID, seqs []uint64)
	}{
		{"Send", func(a *Transport, to wire.NodeID, seqs []uint64) {
			for _, s := range seqs {
				a.Send(to, request(s))
			}
		}},
		{"SendAll", func(a *Transport, to wire.NodeID, seqs []uint64) {
			envs := make([]wire.Envelope, len(seqs))
			for i, s := range seqs {
				envs[i] = wire.Envelope{To: to, Msg: request(s)}
			}
			a.SendAll(envs)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dm := NewDelayModel([][]time.Duration{{0, base}, {base, 0}}, jitter, 7)
			epoch := time.Now()
			sentAt := make([]atomic.Int64, n) // since epoch, recorded before sending
			var next atomic.Uint64
			var minSeen atomic.Int64
			minSeen.Store(int64(time.Hour))
			done := make(chan struct{})
			b := listen(t, 1, 1, dm, func(_ wire.NodeID, m wire.Message) {
				seq := m.(*wire.Request).Op.ID.Seq
				if want := next.Add(1) - 1; seq != want {
					t.Errorf("got message %d, want %d", seq, want)
				}
				if seq%every == 0 {
					took := time.Since(epoch) - time.Duration(sentAt[seq].Load())
					if took < time.Duration(minSeen.Load()) {
						minSeen.Store(int64(took))
					}
				}
				if seq == n-1 {
					close(done)
				}
			})
			a := start(t, Config{Self: wire.FirstClientID, Delay: dm,
				Peers: map[wire.NodeID]Peer{1: {Addr: b.Addr().String(), Site: 1}}}, func(wire.NodeID, wire.Message) {})
			waitConnected(t, a, 1)

			for lo := uint64(0); lo < n; lo += 100 {
				seqs := make([]uint64, 100)
				for i := range seqs {
					seqs[i] = lo + uint64(i)
					sentAt[seqs[i]].Store(int64(time.Since(epoch)))
				}
				tt.send(a, 1, seqs)
			}
			select {
			case <-done:
			case <-time.After(waitFor):
				t.Fatalf("only %d of %d messages arrived", next.Load(), n)
			}
			require.EqualValues(t, n, next.Load())
			require.GreaterOrEqual(t, time.Duration(minSeen.Load()), base-jitter)
			require.Zero(t, a.Stats().Dropped)
		})
	}
}

// Each direction pays the delay of its own site pair: the dialer by its
// peer's configured site, the acceptor by the site its Hello announced.
func TestDelayMatrix(t *testing.T) {
	const wan, slack = 20 * ms, 150 * ms
	// Site 0 hosts the client and a near replica; site 1 is 20 ms away.
	dm := NewDelayModel([][]time.Duration{{0, wan}, {wan, 0}}, 0, 1)
	echo := func(srv *atomic.Pointer[Transport]) Handler {
		return func(from wire.NodeID, m wire.Message) { srv.Load().Send(from, m) }
	}
	var near, far atomic.Pointer[Transport]
	near.Store(listen(t, 1, 0, dm, echo(&near)))
	far.Store(listen(t, 2, 1, dm, echo(&far)))
	replies := newInbox()
	a := start(t, Config{Self: wire.FirstClientID, Site: 0, Delay: dm, Peers: map[wire.NodeID]Peer{
		1: {Addr: near.Load().Addr().String(), Site: 0},
		2: {Addr: far.Load().Addr().String(), Site: 1},
	}}, replies.handle)
	waitConnected(t, a, 1)
	waitConnected(t, a, 2)

	tests := []struct {
		name   string
		to     wire.NodeID
		lo, hi time.Duration // bounds on the round trip
	}{
		{"same site", 1, 0, wan}, // a delay in either direction would exceed this
		{"remote site", 2, 2 * wan, 2*wan + slack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range uint64(5) {
				sent := time.Now()
				a.Send(tt.to, request(i))
				d := replies.next(t)
				rtt := d.at.Sub(sent)
				require.Equal(t, tt.to, d.from)
				require.GreaterOrEqual(t, rtt, tt.lo)
				require.Less(t, rtt, tt.hi)
			}
		})
	}
}
