package round_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/hybridkv/hybridkv/internal/round"
	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func request(producer, seq uint64) *wire.Request {
	return &wire.Request{Op: wire.Op{ID: wire.OpID{Session: producer, Seq: seq}}}
}

func woken(b *round.Inbox) bool {
	select {
	case <-b.Wake():
		return true
	default:
		return false
	}
}

func TestInboxWake(t *testing.T) {
	tests := []struct {
		name  string
		do    func(b *round.Inbox)
		wake  bool
		items int
	}{
		{"nothing", func(*round.Inbox) {}, false, 0},
		{"Put", func(b *round.Inbox) { b.Put(1, request(1, 1)) }, true, 1},
		{"Notify", func(b *round.Inbox) { b.Notify() }, true, 0},
		// A consumer that wakes once must find everything queued so far.
		{"Puts coalesce", func(b *round.Inbox) {
			for i := range uint64(5) {
				b.Put(1, request(1, i))
			}
			b.Notify()
		}, true, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := round.NewInbox()
			tt.do(b)
			require.Equal(t, tt.wake, woken(b))
			require.False(t, woken(b), "at most one wake-up is pending")
			require.Len(t, b.Take(), tt.items)
			require.Empty(t, b.Take())
		})
	}
}

// TestInboxConcurrentPut has many producers race one consumer that drains the
// inbox whenever woken, as the replica loop does.
func TestInboxConcurrentPut(t *testing.T) {
	const (
		producers = 8
		perProd   = 2000
	)
	b := round.NewInbox()
	var wg sync.WaitGroup
	for p := range uint64(producers) {
		wg.Go(func() {
			for seq := range uint64(perProd) {
				b.Put(wire.NodeID(p), request(p, seq))
			}
		})
	}

	var next [producers]uint64
	got := 0
	deadline := time.After(5 * time.Second)
	for got < producers*perProd {
		select {
		case <-b.Wake():
		case <-deadline:
			t.Fatalf("received %d of %d messages", got, producers*perProd)
		}
		for _, in := range b.Take() {
			req, ok := in.Msg.(*wire.Request)
			require.True(t, ok)
			p := req.Op.ID.Session
			require.Equal(t, wire.NodeID(p), in.From)
			require.Equal(t, next[p], req.Op.ID.Seq, "producer %d out of order", p)
			next[p]++
			got++
		}
	}
	wg.Wait()
	require.Empty(t, b.Take(), "a message was delivered twice")
	for p, n := range next {
		require.Equal(t, uint64(perProd), n, "producer %d", p)
	}
}

// TestInboxTakeUpToPutsReplicasFirst: every replica's message is taken,
// clients' only up to the bound, in each sender's order; the rest stays
// queued and the consumer is woken again for it.
func TestInboxTakeUpToPutsReplicasFirst(t *testing.T) {
	b := round.NewInbox()
	client := wire.FirstClientID + 7
	for i := range uint64(5) {
		b.Put(client, request(2, i))
		b.Put(2, request(1, i))
	}
	require.True(t, woken(b))
	got := b.TakeUpTo(3)
	require.Len(t, got, 8)
	for i, in := range got[:5] {
		require.Equal(t, wire.NodeID(2), in.From)
		require.Equal(t, uint64(i), in.Msg.(*wire.Request).Op.ID.Seq)
	}
	for i, in := range got[5:] {
		require.Equal(t, client, in.From)
		require.Equal(t, uint64(i), in.Msg.(*wire.Request).Op.ID.Seq)
	}
	require.Equal(t, 2, b.Len())
	require.True(t, woken(b), "clients' messages are left: the consumer must come back")
	b.Put(client, request(2, 5))
	rest := b.TakeUpTo(3)
	require.Len(t, rest, 3)
	for i, in := range rest {
		require.Equal(t, uint64(3+i), in.Msg.(*wire.Request).Op.ID.Seq)
	}
	require.Equal(t, 0, b.Len())
}
