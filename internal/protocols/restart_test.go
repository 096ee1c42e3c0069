package protocols_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

var curpFamily = []string{"curp", "curp-ht", "curp-ho"}

// TestRestartedWitnessDoesNotLoseFastPathWrites: with N = 5 (f = 2) a
// strong write completes on the fast path, recorded by the leader and three
// witnesses but not yet committed. One of those witnesses crashes and
// restarts, and then the leader crashes. A new leader that took the
// restarted witness's answer as complete although a restart emptied its
// pool would find the write at one witness only, below the ⌈f/2⌉+1 = 2 it
// replays, and lose an acknowledged write. Witness records are durable by
// default; with volatile ones the restarted witness must not count until it
// is known to hold everything it could have acknowledged.
func TestRestartedWitnessDoesNotLoseFastPathWrites(t *testing.T) {
	for _, name := range curpFamily {
		for _, volatile := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/volatile=%v", name, volatile), func(t *testing.T) {
				restartedWitnessScenario(t, name, volatile)
			})
		}
	}
}

func restartedWitnessScenario(t *testing.T, name string, volatile bool) {
	c := newClusterWith(t, name, 5, 1, sim.Network{}, volatile)
	leader := c.Leader()
	others := c.except(leader)
	restarted, absent, slow := others[0], others[2], others[3]
	cl := c.AddClient(siteOf(leader))
	// The write cannot commit (the leader hears no replica) and one
	// witness never sees it: the leader and three witnesses record
	// it, a superquorum of four.
	c.Partition([]wire.NodeID{leader}, others)
	c.Partition([]wire.NodeID{cl}, []wire.NodeID{absent})
	w := c.put(cl, 1, key, "acked", wire.Strong)
	require.Equal(t, "fast", w.Path.String(), "the write should complete on the fast path")

	c.Crash(restarted)
	require.NoError(t, c.Restart(restarted))
	c.Crash(leader)
	// The replica that holds the write's third record is slow to
	// answer the new leader: the other three form its majority.
	c.Heal()
	c.Partition([]wire.NodeID{slow}, others)
	c.RunFor(3 * time.Second)
	c.Heal()
	c.RunFor(3 * time.Second)
	require.NotZero(t, c.Leader())

	reader := c.AddClient(siteOf(c.Leader()))
	got := c.get(reader, 2, key, wire.Strong)
	require.Equal(t, "acked", string(got.Value), "an acknowledged fast-path write was lost (new leader %d)", c.Leader())
}

// TestLostDiskCannotRejoin: a replica whose disk was lost is refused at
// restart instead of rejoining blank, where it could vote a second time in
// a term it already voted in and elect a leader without a committed write.
func TestLostDiskCannotRejoin(t *testing.T) {
	for _, name := range []string{"curp", "raft"} {
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, name, 3, 1, sim.Network{})
			f := c.follower()
			c.Crash(f)
			c.LoseDisk(f)
			require.ErrorIs(t, c.Restart(f), raftlog.ErrBlankDisk)
		})
	}
}

// TestPowerCutKeepsFastPathWrites: every replica crashes right after
// strong writes completed on the fast path, before they committed, and all
// restart from their disks: the writes are still there. Only durable
// witness records can save them: the leader's log alone is one copy, which
// a new leader may overwrite.
func TestPowerCutKeepsFastPathWrites(t *testing.T) {
	forSizes(t, curpFamily, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 1, sim.Network{})
		leader := c.Leader()
		others := c.except(leader)
		cl := c.AddClient(siteOf(leader))
		c.Partition([]wire.NodeID{leader}, others) // nothing commits
		var ids []wire.OpID
		for k := uint64(1); k <= 5; k++ {
			ids = append(ids, c.Submit(cl, k, wire.Op{Kind: wire.Put, Key: keyN(k), Value: []byte(fmt.Sprint("acked-", k))}))
		}
		require.True(t, c.runUntilDone(ids, time.Second))
		for _, id := range ids {
			require.Equal(t, "fast", c.done[id].Path.String())
		}
		for _, r := range c.Replicas() {
			c.Crash(r)
		}
		c.Heal()
		for _, r := range c.Replicas() {
			require.NoError(t, c.Restart(r))
		}
		require.True(t, c.RunUntil(func() bool { return c.Leader() != 0 }, 10*time.Second), "no leader after the restart")
		reader := c.AddClient(siteOf(c.Leader()))
		for k := uint64(1); k <= 5; k++ {
			got := c.get(reader, 100+k, keyN(k), wire.Strong)
			require.Equal(t, fmt.Sprint("acked-", k), string(got.Value), "an acknowledged fast-path write was lost in the power cut")
		}
	})
}

// TestRetryAfterPowerCutAppliesOnce: a write applied before every replica
// crashed is retried with its old identity after they restart, following a
// later write by another session. The session table came back from the
// disk, so the retry is answered from it and not applied a second time.
func TestRetryAfterPowerCutAppliesOnce(t *testing.T) {
	for _, name := range []string{"curp", "curp-ho", "raft"} {
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, name, 3, 1, sim.Network{})
			cl := c.AddClient(0)
			first := c.put(cl, 1, key, "first", wire.Strong)
			for _, r := range c.Replicas() {
				c.Crash(r)
			}
			for _, r := range c.Replicas() {
				require.NoError(t, c.Restart(r))
			}
			require.True(t, c.RunUntil(func() bool { return c.Leader() != 0 }, 10*time.Second))
			other := c.AddClient(1)
			c.put(other, 2, key, "second", wire.Strong)

			retry := &wire.Request{Op: first.Op, Flags: wire.FlagRetry}
			retry.Op.ID = first.ID
			for _, r := range c.Replicas() {
				c.Inject(cl, r, retry)
			}
			c.RunFor(2 * time.Second)
			for _, r := range c.Replicas() {
				got, _ := c.Replica(r).(interface{ Read(string) ([]byte, bool) }).Read(key)
				require.Equal(t, "second", string(got), "replica %d applied the retried write again", r)
			}
		})
	}
}

// TestDeposedLeaderCannotCompleteFastPath: N = 5. The leader pauses; the
// others elect a new leader, through which a client writes k. The old
// leader wakes up cut off from the other replicas but not from clients,
// still believing it leads until its check-quorum fires. A second client
// that cannot reach the new leader reads k: the deposed leader answers from
// its stale state and the three other witnesses, which hold no pending write
// on k, answer ok. Counted together that is a superquorum and a stale read
// on the fast path; the witnesses answer in the new term, so they must not
// count towards the deposed leader's.
func TestDeposedLeaderCannotCompleteFastPath(t *testing.T) {
	for _, name := range curpFamily {
		t.Run(name, func(t *testing.T) {
			require.Empty(t, deposedLeaderScenario(t, name))
		})
	}
}

// deposedLeaderScenario runs TestDeposedLeaderCannotCompleteFastPath's
// scenario and describes what went wrong, if anything.
func deposedLeaderScenario(t *testing.T, name string) string {
	c := newCluster(t, name, 5, 1, sim.Network{})
	old := c.Leader()
	writer := c.AddClient(siteOf(old))
	c.put(writer, 1, key, "old", wire.Strong)
	others := c.except(old)
	c.Partition([]wire.NodeID{old}, others)
	c.Pause(old)
	require.True(t, c.RunUntil(func() bool {
		for _, r := range others {
			if st := c.Status(r); st.Leader == r {
				return true
			}
		}
		return false
	}, 10*time.Second))
	fresh := c.follower() // the leader of the highest term, not old
	for _, r := range others {
		if st := c.Status(r); st.Leader == r {
			fresh = r
		}
	}
	// The paused leader would find the write pending on waking.
	c.Partition([]wire.NodeID{writer}, []wire.NodeID{old})
	c.put(writer, 1, key, "new", wire.Strong)

	reader := c.AddClient(siteOf(old))
	c.Partition([]wire.NodeID{reader}, []wire.NodeID{fresh})
	c.Resume(old)
	id := c.Submit(reader, 2, wire.Op{Kind: wire.Get, Key: key})
	c.RunUntil(func() bool { _, ok := c.done[id]; return ok }, 3*time.Second)
	if got, ok := c.done[id]; ok && string(got.Value) != "new" {
		return fmt.Sprintf("a stale read (%q) completed on the %v path through the deposed leader", got.Value, got.Path)
	}
	// A write sent the same way must not be acknowledged unless the new
	// leader's log will hold it.
	w := c.Submit(reader, 3, wire.Op{Kind: wire.Put, Key: otherKey, Value: []byte("w")})
	c.RunUntil(func() bool { _, ok := c.done[w]; return ok }, 3*time.Second)
	_, acked := c.done[w]
	c.Heal()
	c.RunFor(5 * time.Second)
	if acked {
		if got := c.get(c.AddClient(0), 4, otherKey, wire.Strong); string(got.Value) != "w" {
			return "a write acknowledged through the deposed leader was lost"
		}
	}
	return ""
}

// TestRecoveryReplaysBeforeLaterWeakWrites: a session's strong write
// completes on the fast path but does not commit (the leader is cut off
// from the replicas), and the leader crashes. The session's next write, a
// weak one that acknowledges the strong write, reaches the new leader while
// it recovers. Logged before the replay, it raises the session's floor past
// the strong write, whose replay then looks like a forgotten duplicate and is
// dropped: an acknowledged write lost. A recovering leader must queue weak
// writes too.
func TestRecoveryReplaysBeforeLaterWeakWrites(t *testing.T) {
	for _, name := range []string{"curp-ht", "curp-ho"} {
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, name, 3, 1, sim.Network{})
			old := c.Leader()
			others := c.except(old)
			cl := c.AddClient(siteOf(old))
			c.Partition([]wire.NodeID{old}, others)
			a := c.put(cl, 1, key, "strong", wire.Strong)
			require.Equal(t, "fast", a.Path.String())
			c.Crash(old)
			c.Heal()
			require.True(t, c.RunUntil(func() bool { l := c.Leader(); return l != 0 && l != old }, 10*time.Second))
			weak := &wire.Request{Op: wire.Op{ID: wire.OpID{Session: a.ID.Session, Seq: a.ID.Seq + 1},
				Level: wire.Weak, Kind: wire.Put, Key: otherKey, Value: []byte("weak")},
				AckedBelow: a.ID.Seq + 1, Flags: wire.FlagReplyWanted}
			for _, r := range others {
				c.Inject(cl, r, weak)
			}
			c.RunFor(3 * time.Second)
			got := c.get(c.AddClient(0), 2, key, wire.Strong)
			require.Equal(t, "strong", string(got.Value), "the fast-path write was dropped as a duplicate")
		})
	}
}

// TestReplayKeepsSessionOrderOfWeakWrites (CURP-HO, N = 3): a session's
// weak writes w1 and w2 to one key reach the witnesses unevenly — w1 only
// its bound replica, w2 two replicas — and neither reaches the leader,
// which crashes. The new leader's recovery replays w2 (two records) but not
// w1 (one), and w1 arrives later with its client's retry: logged w2 before
// w1, the session's own strong read returns w1, a value it overwrote. A
// replay must wait, like any request, for the session's previous weak write.
func TestReplayKeepsSessionOrderOfWeakWrites(t *testing.T) {
	require.Empty(t, replayOrderScenario(t))
}

// replayOrderScenario runs TestReplayKeepsSessionOrderOfWeakWrites's
// scenario and describes what went wrong, if anything.
func replayOrderScenario(t *testing.T) string {
	c := newCluster(t, "curp-ho", 3, 1, sim.Network{})
	leader := c.Leader()
	var bound, other wire.NodeID
	for _, r := range c.Replicas() {
		switch {
		case r == leader:
		case bound == 0:
			bound = r
		default:
			other = r
		}
	}
	cl := c.AddClient(siteOf(bound))
	c.Block([]wire.NodeID{cl}, []wire.NodeID{leader, other})
	c.put(cl, 1, key, "w1", wire.Weak)
	c.Heal()
	c.Block([]wire.NodeID{cl}, []wire.NodeID{leader})
	c.put(cl, 1, key, "w2", wire.Weak)
	// The client's retries reach no one until the new leader has recovered.
	c.Block([]wire.NodeID{cl}, c.Replicas())
	c.Crash(leader)
	require.True(t, c.RunUntil(func() bool { l := c.Leader(); return l != 0 && l != leader }, 10*time.Second))
	c.RunFor(time.Second)
	c.Heal()
	c.RunFor(3 * time.Second) // the client's retries of w1 arrive
	if got := c.get(cl, 1, key, wire.Strong); string(got.Value) != "w2" {
		return fmt.Sprintf("the session read %q, its own overwritten write", got.Value)
	}
	return ""
}

// TestLeaderRecordsComeBackFromItsLog: a CURP or CURP-HT leader keeps its
// own witness records in its raft log, not its witness log, so a fast-path
// round pays for one sync; restarted, it finds them there again.
func TestLeaderRecordsComeBackFromItsLog(t *testing.T) {
	forSizes(t, []string{"curp", "curp-ht"}, func(t *testing.T, name string, n int) {
		c := newCluster(t, name, n, 1, sim.Network{})
		leader := c.Leader()
		cl := c.AddClient(siteOf(leader))
		c.Partition([]wire.NodeID{leader}, c.except(leader)) // nothing commits
		var ids []wire.OpID
		for k := uint64(1); k <= 5; k++ {
			ids = append(ids, c.Submit(cl, k, wire.Op{Kind: wire.Put, Key: keyN(k), Value: []byte("v")}))
		}
		require.True(t, c.runUntilDone(ids, time.Second))
		logged, err := c.Records(leader).Load()
		require.NoError(t, err)
		for _, e := range logged {
			require.NotContains(t, ids, e.Op.ID, "the leader logged its own record in its witness log")
		}

		c.Crash(leader)
		require.NoError(t, c.Restart(leader))
		pool := poolOf(c.Replica(leader))
		for _, id := range ids {
			require.True(t, pool.Has(id), "the restarted leader lost its record of %v", id)
		}
	})
}
