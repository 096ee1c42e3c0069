package protocols_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestIdleSessionsAreForgotten: every replica forgets a session once it
// has applied nothing for the expiry, including one that was down when
// the session went idle. After the table stayed empty for longer than the
// expiry, the session's next operations go through and it is kept. In
// CURP-HO a weak write of the session had committed before: named as the
// previous weak write, it would hold them back for good, as no replica
// knows it any more.
func TestIdleSessionsAreForgotten(t *testing.T) {
	for _, name := range protocols.TestNames() {
		t.Run(name, func(t *testing.T) {
			skipWithoutSessionExpiry(t, name)
			c := newExpiringCluster(t, name)
			cl := c.AddClient(0)
			c.put(cl, watched, key, "a", wire.Strong)
			c.put(cl, watched, otherKey, "w", wire.Weak)
			c.RunFor(time.Second) // the weak write commits
			require.Equal(t, []int{2, 2, 2}, c.sessions(), "the warm-up session and this one")

			down := c.follower()
			c.Crash(down)
			c.RunFor(simExpiry + time.Second)
			require.NoError(t, c.Restart(down))
			c.RunFor(time.Second)
			require.Equal(t, []int{0, 0, 0}, c.sessions(), "every idle session is forgotten")
			// The table stays empty for longer than the expiry: the log's
			// clock must keep up, or the session's next operation would
			// be stamped with a time long past and forgotten at once.
			c.RunFor(simExpiry + time.Second)
			forgotten := c.expired()
			require.Equal(t, []uint64{2, 2, 2}, forgotten)

			c.put(cl, watched, key, "b", wire.Strong)
			c.put(cl, watched, otherKey, "x", wire.Weak)
			got := c.get(cl, watched, key, wire.Strong)
			require.Equal(t, "b", string(got.Value))
			c.RunFor(time.Second)
			require.Equal(t, []int{1, 1, 1}, c.sessions(), "the session is open again")
			require.Equal(t, forgotten, c.expired(), "a session was forgotten as soon as it came back")
			require.True(t, c.RunUntil(c.converged, 5*time.Second), "replicas did not converge")
		})
	}
}

// simExpiry is the session expiry of newExpiringCluster; watched is the
// session its tests follow.
const (
	simExpiry = 5 * time.Second
	watched   = 7
)

// newExpiringCluster is a three-replica cluster whose replicas forget
// sessions idle for simExpiry.
func newExpiringCluster(t *testing.T, name string) *cluster {
	t.Helper()
	return newClusterTuned(t, name, 3, 1, sim.Network{}, func(cfg *sim.Config) { cfg.SessionExpiry = simExpiry })
}

// sessions returns each replica's session-table size.
func (c *cluster) sessions() []int {
	var n []int
	for _, r := range c.Replicas() {
		n = append(n, c.Replica(r).Metrics().Sessions)
	}
	return n
}

// expired returns how many sessions each replica forgot.
func (c *cluster) expired() []uint64 {
	var n []uint64
	for _, r := range c.Replicas() {
		n = append(n, c.Replica(r).Metrics().SessionsExpired)
	}
	return n
}

// converged reports whether every replica applied the same state.
func (c *cluster) converged() bool {
	first := c.Replica(c.Replicas()[0]).Status()
	for _, r := range c.Replicas()[1:] {
		st := c.Replica(r).Status()
		if st.Applied != first.Applied || st.Digest != first.Digest {
			return false
		}
	}
	return true
}

// TestNewLeaderDoesNotJumpTheClock: the leader's ticks run at a third of
// the followers' rate for twice the expiry, so the log's clock, which it
// keeps, falls behind the followers' own ticks by more than the expiry;
// then it crashes. Had a follower counted its own ticks all along, its
// first clock entry as the new leader would jump the log's clock past the
// expiry and forget a session active a moment before (a retry of whose
// operation would then take effect twice); following the log's clock while
// it follows, it keeps the session.
func TestNewLeaderDoesNotJumpTheClock(t *testing.T) {
	for _, name := range protocols.TestNames() {
		t.Run(name, func(t *testing.T) {
			c := newExpiringCluster(t, name)
			cl := c.AddClient(0)
			old := c.Leader()
			c.SetTickRate(old, 1.0/3)
			for i := range 20 {
				c.put(cl, watched, key, fmt.Sprint(i), wire.Strong)
				c.RunFor(simExpiry / 10)
			}
			c.Crash(old)
			require.True(t, c.RunUntil(func() bool { return c.Leader() != 0 && c.Leader() != old }, 5*time.Second),
				"no new leader")
			c.put(cl, watched+1, otherKey, "after", wire.Strong) // the new leader's clock entry is committed
			c.RunFor(simExpiry / 10)
			for _, r := range c.Replicas() {
				// Sessions 7 and 8, and the warm-up session until the
				// clock, slow until the crash, passes its expiry.
				if r != old {
					require.GreaterOrEqual(t, c.Replica(r).Metrics().Sessions, 2,
						"replica %d forgot a session active just before the leader changed", r)
				}
			}
		})
	}
}
