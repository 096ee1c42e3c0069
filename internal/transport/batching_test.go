package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Thousands of small messages must cost few writes, not one each.
func TestBatchingCoalescesWrites(t *testing.T) {
	const n = 10000
	tests := []struct {
		name      string
		flush     time.Duration
		maxWrites uint64
	}{
		// Without a flush delay the writer still takes whatever piled up
		// while it was busy; only bound it by the message count.
		{"no flush delay", 0, n},
		{"flush delay", 2 * ms, n / 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := listen(t, 1, 0, nil, func(wire.NodeID, wire.Message) {})
			a := start(t, Config{Self: wire.FirstClientID, FlushDelay: tt.flush,
				Peers: map[wire.NodeID]Peer{1: {Addr: b.Addr().String()}}}, func(wire.NodeID, wire.Message) {})
			waitConnected(t, a, 1)
			m := request(0)
			for i := range uint64(n) {
				m.Op.ID.Seq = i // the message is encoded at once, so reuse is safe
				a.Send(1, m)
			}
			require.Eventually(t, func() bool { return b.Stats().Received == n }, waitFor, time.Millisecond)
			st := a.Stats()
			require.EqualValues(t, n, st.Sent)
			require.LessOrEqual(t, st.Writes, tt.maxWrites)
			t.Logf("%d messages in %d writes", n, st.Writes)
		})
	}
}

// In steady state the send path reuses its buffers: no allocation per
// message, delayed or not.
func TestSendDoesNotAllocate(t *testing.T) {
	dm := NewDelayModel([][]time.Duration{{0, 2 * ms}, {2 * ms, 0}}, ms, 1)
	tests := []struct {
		name  string
		site  uint32
		flush time.Duration
		batch int
	}{
		{"Send", 0, 0, 0},
		{"Send with flush delay", 0, 100 * time.Microsecond, 0},
		{"Send delayed", 1, 0, 0},
		{"SendAll", 0, 0, 16},
		{"SendAll delayed", 1, 0, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := discardServer(t)
			a := start(t, Config{Self: wire.FirstClientID, Delay: dm, FlushDelay: tt.flush,
				Peers: map[wire.NodeID]Peer{1: {Addr: addr, Site: tt.site}}}, func(wire.NodeID, wire.Message) {})
			waitConnected(t, a, 1)
			m := request(1)
			envs := make([]wire.Envelope, tt.batch)
			for i := range envs {
				envs[i] = wire.Envelope{To: 1, Msg: m}
			}
			send := func() {
				if tt.batch == 0 {
					a.Send(1, m)
				} else {
					a.SendAll(envs)
				}
			}
			for range 20000 { // grow the buffers to their working size
				send()
			}
			time.Sleep(10 * ms)
			require.Zero(t, testing.AllocsPerRun(2000, send))
			require.Zero(t, a.Stats().Dropped)
		})
	}
}
