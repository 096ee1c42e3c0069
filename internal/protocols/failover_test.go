package protocols_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestLeaderCrash crashes the leader while sessions write their own keys
// and read at both levels: a new leader takes over, every operation is
// answered, no acknowledged strong write is lost, and once the old leader
// restarts all replicas converge.
func TestLeaderCrash(t *testing.T) {
	forSizes(t, protocols.TestNames(), func(t *testing.T, name string, n int) {
		for seed := uint64(1); seed <= 3; seed++ {
			c := newCluster(t, name, n, seed, sim.Network{OneWay: sim.UniformWAN(n, 25*time.Millisecond), Jitter: 5 * time.Millisecond})
			w := newKeyedLoad(c, n, 2, 40)
			w.start()
			c.RunFor(300 * time.Millisecond)
			old := c.Leader()
			c.Crash(old)
			require.True(t, c.RunUntil(w.finished, 2*time.Minute),
				"seed %d: %d of %d operations answered after the leader crashed", seed, w.completed, w.total)
			require.NotEqual(t, old, c.Leader())
			// Fast-path writes are acknowledged before they are applied:
			// give commit its round trip.
			require.True(t, c.RunUntil(func() bool { return w.durable(c.Replicas()) }, 10*time.Second),
				"seed %d: %s", seed, w.lost(c.Replicas()))
			require.NoError(t, c.Restart(old))
			ok, sts := c.Converged(30 * time.Second)
			require.True(t, ok, "seed %d: replicas diverged: %+v", seed, sts)
			require.True(t, w.durable([]wire.NodeID{old}), "seed %d: %s", seed, w.lost([]wire.NodeID{old}))
		}
	})
}

// keyedLoad gives every session its own key: the key's final value must be
// the session's last acknowledged write or a later one.
type keyedLoad struct {
	c                *cluster
	sessions         []*keyedSession
	total, completed int
}

type keyedSession struct {
	client    wire.NodeID
	id        uint64
	key       string
	ops, done int
	acked     int // number of the last acknowledged write
	written   map[string]int
}

func newKeyedLoad(c *cluster, n, perSite, ops int) *keyedLoad {
	w := &keyedLoad{c: c}
	for site := range n {
		cl := c.AddClient(uint32(site))
		for k := range perSite {
			id := uint64(site*100 + k + 1)
			w.sessions = append(w.sessions, &keyedSession{client: cl, id: id, key: keyN(1000 + id), ops: ops, written: map[string]int{}})
			w.total += ops
		}
	}
	return w
}

func (w *keyedLoad) start() {
	bySession := map[uint64]*keyedSession{}
	for _, s := range w.sessions {
		bySession[s.id] = s
	}
	w.c.OnComplete = func(_ wire.NodeID, d clientcore.Completion) {
		s := bySession[d.ID.Session]
		w.completed++
		s.done++
		if d.Op.Kind.IsWrite() {
			s.acked = max(s.acked, s.written[string(d.Op.Value)])
		}
		if s.done < s.ops {
			w.next(s)
		}
	}
	for _, s := range w.sessions {
		w.next(s)
	}
}

func (w *keyedLoad) next(s *keyedSession) {
	op := wire.Op{Key: s.key}
	switch s.done % 3 {
	case 0:
		op.Kind = wire.Put
		op.Value = fmt.Appendf(nil, "%d/%d", s.id, s.done)
		s.written[string(op.Value)] = s.done + 1
	case 1:
		op.Level = wire.Weak
	}
	w.c.Submit(s.client, s.id, op)
}

func (w *keyedLoad) finished() bool { return w.completed == w.total }

// durable reports whether every running replica of rs holds, for every
// session's key, the last acknowledged write or a later one.
func (w *keyedLoad) durable(rs []wire.NodeID) bool { return w.lost(rs) == "" }

// lost describes the first acknowledged write missing from a replica.
func (w *keyedLoad) lost(rs []wire.NodeID) string {
	for _, r := range rs {
		if !w.c.Up(r) {
			continue
		}
		for _, s := range w.sessions {
			v, _ := w.c.Replica(r).(interface{ Read(string) ([]byte, bool) }).Read(s.key)
			if got := s.written[string(v)]; got < s.acked {
				return fmt.Sprintf("replica %d holds write %d of key %s, older than acknowledged write %d", r, got, s.key, s.acked)
			}
		}
	}
	return ""
}
