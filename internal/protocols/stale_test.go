package protocols_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// gone is a client that sent its requests and vanished: replies to it are
// dropped.
const gone = wire.FirstClientID + 4242

// put is a request to write value to k as operation seq of session.
func put(session, seq uint64, level wire.Level, k, value string) *wire.Request {
	return &wire.Request{Op: wire.Op{ID: wire.OpID{Session: session, Seq: seq}, Level: level,
		Kind: wire.Put, Key: k, Value: []byte(value)}, AckedBelow: 1}
}

func poolSizes(c *cluster) []int {
	var sizes []int
	for _, r := range c.Replicas() {
		m := c.Replica(r).Metrics()
		sizes = append(sizes, measure(&m, curp.MetricWitnessRecords))
	}
	return sizes
}

func poolsEmpty(c *cluster) bool {
	for _, n := range poolSizes(c) {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestAbandonedStrongWriteIsLogged: a client's strong write reaches every
// witness but not the leader, and the client is gone. Its records would
// block the fast path on the key until the session's next operation, which
// never comes; the witnesses hand them to the leader once stale, it logs
// the write, and the records leave every pool: the write is applied (its
// client recorded it as possibly applied) and the key's fast path is open
// again.
func TestAbandonedStrongWriteIsLogged(t *testing.T) {
	forSizes(t, []string{"curp", "curp-ht", "curp-ho"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 21, sim.Network{})
		req := put(901, 1, wire.Strong, key, "abandoned")
		for _, r := range c.except(c.Leader()) {
			c.Inject(gone, r, req)
		}
		c.RunFor(100 * time.Millisecond)
		require.False(t, poolsEmpty(c), "the witnesses should hold the write: %v", poolSizes(c))
		require.True(t, c.RunUntil(func() bool { return poolsEmpty(c) }, 10*time.Second),
			"seed %d: records of the abandoned write stayed: %v", c.seed, poolSizes(c))
		cl := c.AddClient(siteOf(c.Leader()))
		got := c.get(cl, 902, key, wire.Strong)
		require.Equal(t, "abandoned", string(got.Value))
		next := c.put(cl, 902, key, "next", wire.Strong)
		// Next to the leader, the committed result and the superquorum
		// arrive together; either way the protocol did not fall back.
		require.Contains(t, []clientcore.Path{clientcore.PathFast, clientcore.PathCommitted}, next.Path,
			"the key's fast path stayed blocked")
	})
}

// TestAbandonedWeakWriteIsLogged (CURP-HO): the bound replica acknowledged
// a weak write that never reached the leader, and its client is gone. The
// write would stay out of the log for good; the bound replica hands its
// stale record to the leader, which logs it, and every session reads it.
func TestAbandonedWeakWriteIsLogged(t *testing.T) {
	forSizes(t, []string{"curp-ho"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 22, sim.Network{})
		bound := c.follower()
		req := put(903, 1, wire.Weak, key, "acknowledged")
		req.Flags = wire.FlagReplyWanted
		c.Inject(gone, bound, req)
		require.True(t, c.RunUntil(func() bool { return poolsEmpty(c) }, 10*time.Second),
			"seed %d: the weak write stayed pooled: %v", c.seed, poolSizes(c))
		got := c.get(c.AddClient(siteOf(c.Leader())), 904, key, wire.Strong)
		require.Equal(t, "acknowledged", string(got.Value))
	})
}

// TestHeldRequestIsHeldOnce (CURP-HO): a request the leader holds until
// its session's previous weak write is logged is held once, however often
// its client re-sends it or a witness hands over its stale record; each
// copy used to queue again behind a write that may never come.
func TestHeldRequestIsHeldOnce(t *testing.T) {
	forSizes(t, []string{"curp-ho"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 23, sim.Network{})
		leader := c.Leader()
		held := put(905, 2, wire.Weak, key, "after a write that never came")
		held.PrevWeak, held.Flags = 1, wire.FlagRetry
		for range 5 {
			c.Inject(gone, leader, held)
			c.RunFor(time.Millisecond)
		}
		m := c.Replica(leader).Metrics()
		require.Equal(t, 1, measure(&m, curp.MetricHeldRequests))
	})
}

// TestStaleRecordsAreHandedOverInBoundedSweeps: a witness holding more
// stale records than one sweep hands over (a follower that fell behind
// holds many) sends the oldest 256 at a time, and all of them reach the
// log in a few sweeps.
func TestStaleRecordsAreHandedOverInBoundedSweeps(t *testing.T) {
	c := newCluster(t, "curp", 3, 24, sim.Network{})
	f := c.follower()
	const n = 300
	for i := range uint64(n) {
		c.Inject(gone, f, put(1000+i, 1, wire.Strong, keyN(100+i), "abandoned"))
	}
	forwarded := func() int { m := c.Replica(f).Metrics(); return measure(&m, curp.MetricStaleForwarded) }
	require.True(t, c.RunUntil(func() bool { return forwarded() > 0 }, 10*time.Second), "nothing was handed over")
	require.EqualValues(t, 256, forwarded(), "one sweep handed over more than its bound")
	require.True(t, c.RunUntil(func() bool { return poolsEmpty(c) }, 10*time.Second),
		"seed %d: stale records stayed: %v", c.seed, poolSizes(c))
	m := c.Replica(c.Leader()).Metrics()
	require.EqualValues(t, n, measure(&m, curp.MetricStaleLogged))
}

// measure reads one of a protocol's own metrics; a protocol without it
// fails the test.
func measure(m *protocol.Metrics, name string) int {
	v, ok := m.Measure(name)
	if !ok {
		panic("no metric " + name)
	}
	return int(v)
}
