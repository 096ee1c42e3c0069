package protocols_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestReplayKeepsFastPathsBeforeLaterOperations (CURP-HO, N = 5, f = 2
// crashes): a new leader recovering from three witnesses whose pools
// disagree one to one must still log a fast-path write before what was
// invoked after it completed.
//
// The leader is cut off from the replicas (clients still reach it, and
// every clock runs slow so that no one is elected meanwhile). Session 1's
// strong write A on key k completes on the fast path: leader, r1, r3 and r4
// record it; its copy to r2 travels on a slow link. Then session 2 writes
// key x strongly (fast path through the leader, r2, r3, r4; its link to r1
// is down) and key k weakly; only after that does A reach r2. The leader
// and r4 crash. The new leader recovers from r1 [A], r2 [x, k, A] and r3
// [A, x, k]: between A and session 2's writes r2 and r3 disagree, and r1
// holds A alone. Broken by peer id, the tie logged session 2's weak write
// on k before A, and the session's own strong read of k returned A (C1).
// A was in every pool a superquorum member could hold it in ahead of
// session 2's writes, so it must go first.
func TestReplayKeepsFastPathsBeforeLaterOperations(t *testing.T) {
	require.Empty(t, replayTieScenario(t))
}

// replayTieScenario runs TestReplayKeepsFastPathsBeforeLaterOperations's
// scenario and describes what went wrong, if anything.
func replayTieScenario(t *testing.T) string {
	c := newCluster(t, "curp-ho", 5, 1, sim.Network{})
	leader := c.Leader()
	followers := c.except(leader)
	slices.Sort(followers)
	r1, r2, r3, r4 := followers[0], followers[1], followers[2], followers[3]
	for _, r := range c.Replicas() {
		c.SetTickRate(r, 0.05)
	}
	c.Partition([]wire.NodeID{leader}, followers)

	c1 := c.AddClient(siteOf(r1))
	c2 := c.AddClient(siteOf(r3))
	c.SlowLink(c1, r2, 300*time.Millisecond)
	a := c.put(c1, 1, key, "a", wire.Strong)
	require.Equal(t, "fast", a.Path.String(), "A must complete on the fast path")
	c.Block([]wire.NodeID{c2}, []wire.NodeID{r1})
	x := c.put(c2, 2, otherKey, "x", wire.Strong)
	require.Equal(t, "fast", x.Path.String(), "session 2's strong write must complete on the fast path")
	c.put(c2, 2, key, "w", wire.Weak)
	c.RunFor(400 * time.Millisecond) // A reaches r2 last

	for _, r := range []wire.NodeID{r1, r2, r3} {
		if c.Status(r).Leader != leader {
			return fmt.Sprintf("replica %d left the leader's term before the crash", r)
		}
	}
	c.Crash(leader)
	c.Crash(r4)
	c.Heal()
	// Session 2's retries of its weak write would reach r1 now; they come
	// after the recovery.
	c.Block([]wire.NodeID{c2}, []wire.NodeID{r1})
	for _, r := range []wire.NodeID{r1, r2, r3} {
		c.SetTickRate(r, 1)
	}
	require.True(t, c.RunUntil(func() bool { l := c.Leader(); return l != 0 && l != leader && l != r4 }, 10*time.Second))
	c.RunFor(time.Second)
	c.Heal()
	if got := c.get(c2, 2, key, wire.Strong); string(got.Value) != "w" {
		return fmt.Sprintf("session 2's strong read of key %s returned %q, not its own weak write %q (the replay logged A after it)", key, got.Value, "w")
	}
	return ""
}
