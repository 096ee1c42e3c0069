package protocols_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestWhatWaitsForTheDisk: with a disk far slower than the network, a
// strong write's fast path waits for a sync, and so does a CURP-HO read
// (it may tell of pooled weak writes), while a CURP or CURP-HT read, which
// vouches only for the applied state, completes on the fast path without
// one; so does a CURP-HT weak read.
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
		if name == "curp-ho" {
			// By the time the sync is done, the commit may be too.
			require.GreaterOrEqual(t, took, disk/2, "a CURP-HO read may tell of pooled writes: it waits")
		} else {
			require.Equal(t, "fast", path)
			require.Less(t, took, disk/2, "a read that rests on the applied state waited for the disk")
		}
		if name == "curp-ht" {
			reader := c.AddClient(siteOf(c.follower()))
			path, took = timed(func() string { return c.get(reader, 8, keyN(4), wire.Weak).Path.String() })
			require.Equal(t, "weak", path)
			require.Less(t, took, disk/2, "a CURP-HT weak read waited for the disk")
		}
	})
}
