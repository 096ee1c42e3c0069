package protocols_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestWhatWaitsForTheDisk: with a disk far slower than the network, a
// strong write's fast path waits for a sync, while a read that names no
// pooled write, which vouches only for the applied state, completes on
// the fast path without one; so does a CURP-HT weak read.
func TestWhatWaitsForTheDisk(t *testing.T) {
	const disk = 400 * time.Millisecond // each sync takes 200-600 ms
	forSizes(t, curpFamily, func(t *testing.T, name string, n int) {
		c := newClusterTuned(t, name, n, 1, sim.Network{}, func(cfg *sim.Config) {
			cfg.DiskLatency = disk
			cfg.ElectionTicks = 200 // commits take syncs; no elections for that
		})
		cl := c.AddClient(siteOf(c.Leader()))
		timed := func(op func() string) (string, time.Duration) {
			start := c.Now()
			path := op()
			return path, c.Now() - start
		}
		// The witnesses' oks and the leader's commit each wait for syncs of
		// their own: which reaches the client first depends on the syncs'
		// drawn lengths, so a write may complete as committed. The first
		// of a few that completes on the fast path is the one looked at.
		fast := false
		for key := uint64(3); key < 8 && !fast; key++ {
			path, took := timed(func() string { return c.put(cl, 7, keyN(key), "v", wire.Strong).Path.String() })
			fast = path == "fast"
			require.GreaterOrEqual(t, took, disk/2, "a strong write completed (%s) without waiting for a sync", path)
		}
		require.True(t, fast, "no strong write completed on the fast path")

		path, took := timed(func() string { return c.get(cl, 7, keyN(8), wire.Strong).Path.String() }) // a key never written
		require.Equal(t, "fast", path)
		require.Less(t, took, disk/2, "a read that rests on the applied state waited for the disk")
		if name == "curp-ht" {
			reader := c.AddClient(siteOf(c.follower()))
			path, took = timed(func() string { return c.get(reader, 8, keyN(4), wire.Weak).Path.String() })
			require.Equal(t, "weak", path)
			require.Less(t, took, disk/2, "a CURP-HT weak read waited for the disk")
		}
	})
}

// TestNamedWriteOutlivesAPowerCut: a CURP-HO session sends a weak write
// and, before it is acknowledged, a strong read of its key, which reads
// it; every reply to the read names the write. Those replies wait until
// the write's record is durable, so the read completes only after a sync,
// and once it has, a power cut loses the write nowhere: a strong read
// after the cut still finds it. A read that names a write pooled a sync
// before it, durable already, does not wait.
func TestNamedWriteOutlivesAPowerCut(t *testing.T) {
	require.Empty(t, namedWriteScenario(t))

	c := slowDiskCluster(t)
	leader := c.Leader()
	cl := c.AddClient(siteOf(leader))
	c.put(cl, 7, "k", "w", wire.Weak)
	c.Partition([]wire.NodeID{leader}, c.except(leader)) // nothing commits: the write stays pooled
	c.RunFor(2 * slowDisk)                               // every replica's sync of it is done
	start := c.Now()
	got := c.get(cl, 7, "k", wire.Strong)
	require.Equal(t, "w", string(got.Value))
	require.Equal(t, "fast", got.Path.String())
	require.Less(t, c.Now()-start, slowDisk/2, "a read naming a durable write waited for the disk")
}

// slowDisk is how long the slow disk's syncs take on average.
const slowDisk = 400 * time.Millisecond

// slowDiskCluster is a CURP-HO cluster of three whose syncs take 200-600
// ms, with elections far enough apart for commits that wait on them.
func slowDiskCluster(t *testing.T) *cluster {
	return newClusterTuned(t, "curp-ho", 3, 1, sim.Network{}, func(cfg *sim.Config) {
		cfg.DiskLatency = slowDisk
		cfg.ElectionTicks = 200
	})
}

// namedWriteScenario runs TestNamedWriteOutlivesAPowerCut's first part
// and says what went wrong, if anything: the mutation test re-introduces
// replies that name a write before its record is durable, and expects the
// write lost.
func namedWriteScenario(t *testing.T) string {
	c := slowDiskCluster(t)
	cl := c.AddClient(siteOf(c.Leader()))
	c.Submit(cl, 7, wire.Op{Kind: wire.Put, Key: "k", Value: []byte("w"), Level: wire.Weak})
	r := c.Submit(cl, 7, wire.Op{Kind: wire.Get, Key: "k", Level: wire.Strong})
	start := c.Now()
	require.True(t, c.runUntilDone([]wire.OpID{r}, 10*time.Second))
	read := c.done[r]
	require.Equal(t, "w", string(read.Value), "the read missed its session's write")
	took := c.Now() - start
	// The write's retries reach no one now, and every replica loses power.
	c.Block([]wire.NodeID{cl}, c.Replicas())
	for _, id := range c.Replicas() {
		c.Crash(id)
	}
	for _, id := range c.Replicas() {
		require.NoError(t, c.Restart(id))
	}
	require.True(t, c.RunUntil(func() bool { return c.Leader() != 0 }, 20*time.Second))
	after := c.get(c.AddClient(siteOf(c.Leader())), 8, "k", wire.Strong)
	if string(after.Value) != "w" {
		return fmt.Sprintf("a strong read found %q after one that had completed in %v found %q", after.Value, took, read.Value)
	}
	require.GreaterOrEqual(t, took, slowDisk/2, "the read completed before a sync")
	return ""
}
