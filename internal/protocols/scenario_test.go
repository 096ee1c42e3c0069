package protocols_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// key and otherKey are the keys the targeted tests use.
const key, otherKey = "k7", "k8"

// keyN names key n of a test that writes many.
func keyN(n uint64) string { return fmt.Sprint("k", n) }

var hybrid = []string{"curp-ht", "curp-ho"}

// TestReadYourWritesFromLaggingReplica: the closest replica is cut off from
// the leader, so it has not applied the session's weak write: it holds the
// read back (the session's floor), and the client moves on to a replica
// that reflects the write.
func TestReadYourWritesFromLaggingReplica(t *testing.T) {
	forSizes(t, []string{"curp-ht"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 1, sim.Network{})
		f := c.follower()
		c.Partition([]wire.NodeID{c.Leader()}, []wire.NodeID{f})
		cl := c.AddClient(siteOf(f))
		w := c.put(cl, 1, key, "mine", wire.Weak)
		require.Less(t, c.Status(f).Applied, w.Slot, "the closest replica should lag")
		got := c.get(cl, 1, key, wire.Weak)
		require.Equal(t, "mine", string(got.Value))
	})
}

// TestFresherReplicaAnswersTheNewerWrite: once the closest replica applied
// a later write by another session, the session reads that, not its own.
func TestFresherReplicaAnswersTheNewerWrite(t *testing.T) {
	forSizes(t, []string{"curp-ht"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 2, sim.Network{})
		f := c.follower()
		a, b := c.AddClient(siteOf(f)), c.AddClient(siteOf(c.Leader()))
		c.put(a, 1, key, "old", wire.Weak)
		later := c.put(b, 2, key, "new", wire.Strong)
		require.True(t, c.RunUntil(func() bool { return c.Status(f).Applied >= later.Slot }, 5*time.Second))
		got := c.get(a, 1, key, wire.Weak)
		require.Equal(t, "new", string(got.Value))
	})
}

// TestMonotonicReadsAfterStrongRead: a strong read saw a value the closest
// replica has not applied; a later weak read must not go back in time.
func TestMonotonicReadsAfterStrongRead(t *testing.T) {
	forSizes(t, hybrid, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 3, sim.Network{})
		f := c.follower()
		c.Partition([]wire.NodeID{c.Leader()}, []wire.NodeID{f})
		a, b := c.AddClient(siteOf(f)), c.AddClient(siteOf(c.Leader()))
		c.put(b, 2, key, "x", wire.Strong)
		strong := c.get(a, 1, key, wire.Strong)
		require.Equal(t, "x", string(strong.Value))
		require.Less(t, c.Status(f).Applied, strong.Slot, "the closest replica should lag")
		weak := c.get(a, 1, key, wire.Weak)
		require.Equal(t, "x", string(weak.Value))
	})
}

// TestWeakWriteThenStrongRead: a strong read after the session's weak
// write of the same key returns that write (C1).
func TestWeakWriteThenStrongRead(t *testing.T) {
	forSizes(t, hybrid, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 4, sim.Network{})
		cl := c.AddClient(siteOf(c.follower()))
		c.put(cl, 1, key, "w", wire.Weak)
		got := c.get(cl, 1, key, wire.Strong)
		require.True(t, got.Found)
		require.Equal(t, "w", string(got.Value))
	})
}

func superquorum(n int) int { f := (n - 1) / 2; return f + (f+1)/2 + 1 }

// holders splits the replicas so that a weak write reaches n - superquorum
// + 1 of them, the bound one included and the leader not: the replicas that
// lack it, leader included, cannot form a superquorum.
func holders(c *cluster, bound wire.NodeID, n int) (have, lack []wire.NodeID) {
	sq := superquorum(n)
	have = []wire.NodeID{bound}
	for _, r := range c.Replicas() {
		if r == bound {
			continue
		}
		if r != c.Leader() && len(have) < n-sq+1 {
			have = append(have, r)
		} else {
			lack = append(lack, r)
		}
	}
	return have, lack
}

// TestReadDepDisagreementForcesSlowPath: a pending weak write that some
// witnesses hold and the leader does not makes the read dependencies
// disagree; the strong read takes the slow path and does not see the write.
func TestReadDepDisagreementForcesSlowPath(t *testing.T) {
	forSizes(t, []string{"curp-ho"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 5, sim.Network{})
		bound := c.follower()
		writer := c.AddClient(siteOf(bound))
		_, lack := holders(c, bound, n)
		c.Partition([]wire.NodeID{writer}, lack)
		c.put(writer, 1, key, "pending", wire.Weak)
		reader := c.AddClient(siteOf(c.Leader()))
		got := c.get(reader, 2, key, wire.Strong)
		require.Equal(t, clientcore.PathSlow, got.Path)
		require.False(t, got.Found, "an uncommitted weak write held by too few witnesses leaked")
		c.Heal()
	})
}

// TestReadDepFollowsLogOrder (CURP-HO): the leader holds a session's weak
// write a2 back until the session's previous weak write a1 arrives, and
// meanwhile logs another session's weak write b on the same key; a1 comes,
// and a1, a2 are logged after b. A strong read logged next must return a2,
// the last write on the key in the log, although b arrived last at every
// replica: a read dependency chosen by arrival order returned b on the fast
// path, a value the log had already overwritten.
func TestReadDepFollowsLogOrder(t *testing.T) {
	forSizes(t, []string{"curp-ho"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 9, sim.Network{})
		leader := c.Leader()
		a, b := c.AddClient(siteOf(leader)), c.AddClient(siteOf(leader))
		weak := func(session, seq, prevWeak uint64, k, value string) *wire.Request {
			return &wire.Request{Op: wire.Op{ID: wire.OpID{Session: session, Seq: seq}, Level: wire.Weak,
				Kind: wire.Put, Key: k, Value: []byte(value)}, PrevWeak: prevWeak}
		}
		a1, a2 := weak(101, 1, 0, otherKey, "a1"), weak(101, 2, 1, key, "a2")
		wb := weak(102, 1, 0, key, "b")
		for _, r := range c.except(leader) {
			c.Inject(a, r, a1)
		}
		for _, r := range c.Replicas() {
			c.Inject(a, r, a2) // held at the leader: a1 is not logged
		}
		for _, r := range c.Replicas() {
			c.Inject(b, r, wb)
		}
		c.RunFor(time.Millisecond)
		c.Inject(a, leader, a1) // logged, and a2 after it
		c.RunFor(time.Millisecond)
		got := c.get(c.AddClient(siteOf(leader)), 103, key, wire.Strong)
		require.Equal(t, "a2", string(got.Value), "the strong read returned %q on the %v path", got.Value, got.Path)
	})
}

// TestMissingCausalDepForcesSlowPath: the session's weak write is missing
// from enough witnesses, so its next strong operation cannot take the fast
// path.
func TestMissingCausalDepForcesSlowPath(t *testing.T) {
	forSizes(t, []string{"curp-ho"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 6, sim.Network{})
		bound := c.follower()
		cl := c.AddClient(siteOf(bound))
		// Keep the write from n - superquorum + 1 witnesses, neither the
		// leader (which logs it) nor the bound replica.
		var cut []wire.NodeID
		for _, r := range c.Replicas() {
			if len(cut) < n-superquorum(n)+1 && r != c.Leader() && r != bound {
				cut = append(cut, r)
			}
		}
		c.Partition([]wire.NodeID{cl}, cut)
		c.put(cl, 1, key, "w", wire.Weak)
		c.Heal()
		got := c.put(cl, 1, otherKey, "s", wire.Strong)
		require.Equal(t, clientcore.PathSlow, got.Path)
	})
}

// TestAppliedCausalDepKeepsFastPath: replicas apply a session's weak write
// before its client hears that it committed (the leader tells the client a
// one-way delay after it applies; followers learn the commit from each
// other). A strong operation the session sends in between finds the write
// applied, no longer pooled, at the leader and at witnesses; applied is
// committed, which is all the fast path needs of it.
func TestAppliedCausalDepKeepsFastPath(t *testing.T) {
	forSizes(t, []string{"curp-ho"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 23, sim.Network{})
		cl := c.AddClient(siteOf(c.follower()))
		// 25 ms one way: the strong operations sent between about 25 and
		// 50 ms after the weak write completed reach the leader after it
		// applied the write and before the client hears of it.
		for i := range uint64(16) {
			session := 10 + i
			c.put(cl, session, keyN(100+i), "w", wire.Weak)
			c.RunFor(time.Duration(5*i) * time.Millisecond)
			got := c.put(cl, session, keyN(200+i), "s", wire.Strong)
			require.Contains(t, []clientcore.Path{clientcore.PathFast, clientcore.PathCommitted}, got.Path,
				"seed %d: sent %d ms after the weak write: %v path (%v)", c.seed, 5*i, got.Path, got.Reason)
		}
	})
}

// TestUncommittedWeakWriteInvisibleToOthers: another session bound to the
// same replica does not see a weak write until it is committed (C3).
func TestUncommittedWeakWriteInvisibleToOthers(t *testing.T) {
	forSizes(t, []string{"curp-ho"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 7, sim.Network{})
		bound := c.follower()
		writer, reader := c.AddClient(siteOf(bound)), c.AddClient(siteOf(bound))
		c.Partition([]wire.NodeID{writer}, []wire.NodeID{c.Leader()})
		c.put(writer, 1, key, "a", wire.Weak)
		own := c.get(writer, 1, key, wire.Weak)
		require.Equal(t, "a", string(own.Value), "the session must read its own write")
		other := c.get(reader, 2, key, wire.Weak)
		require.False(t, other.Found, "another session saw an uncommitted weak write")
		c.Heal()
		require.True(t, c.RunUntil(func() bool {
			v, ok := c.Replica(bound).(interface{ Read(string) ([]byte, bool) }).Read(key)
			return ok && string(v) == "a"
		}, 10*time.Second), "the weak write was never committed")
		other = c.get(reader, 2, key, wire.Weak)
		require.Equal(t, "a", string(other.Value))
	})
}

// TestWeakReadSeesStrongOrderPast is the regression test for a causal
// visibility bug the checker found: a strong write by another session
// precedes (in the strong order) this session's strong operation, so it is
// in the causal past of the session's next weak read, even on another key
// and even from a lagging replica.
func TestWeakReadSeesStrongOrderPast(t *testing.T) {
	forSizes(t, hybrid, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 8, sim.Network{})
		f := c.follower()
		c.Partition([]wire.NodeID{c.Leader()}, []wire.NodeID{f})
		a, b := c.AddClient(siteOf(f)), c.AddClient(siteOf(c.Leader()))
		c.put(b, 2, key, "theirs", wire.Strong)
		c.put(a, 1, otherKey, "mine", wire.Strong)
		id := c.Submit(a, 1, wire.Op{Kind: wire.Get, Key: key, Level: wire.Weak})
		c.RunFor(200 * time.Millisecond)
		c.Heal()
		require.True(t, c.RunUntil(func() bool { _, ok := c.done[id]; return ok }, 10*time.Second))
		got := c.done[id]
		require.Equal(t, "theirs", string(got.Value), "the weak read missed a write in its causal past")
	})
}
