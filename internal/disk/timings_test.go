package disk

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3/raftpb"
)

// TestTimings: syncs and snapshot saves are counted, summed and bucketed,
// and every duration is within the largest bound.
func TestTimings(t *testing.T) {
	d := open(t, t.TempDir(), nil)
	defer d.Close()
	bounds := []time.Duration{0, time.Hour}
	require.Equal(t, Timings{Syncs: Histogram{Buckets: []uint64{0, 0}}, Snapshots: Histogram{Buckets: []uint64{0, 0}}},
		d.Timings(bounds))

	_, err := d.Load()
	require.NoError(t, err)
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "state")))
	require.NoError(t, d.Save(hardState(1, 0, 1), nil))
	require.NoError(t, d.Save(hardState(1, 0, 2), []*raftpb.Entry{entry(2, 1, "a")}))

	tm := d.Timings(bounds)
	require.Equal(t, d.Stats().Syncs, tm.Syncs.Count)
	require.Positive(t, tm.Syncs.Count)
	require.Positive(t, tm.Syncs.Sum)
	require.Equal(t, []uint64{0, tm.Syncs.Count}, tm.Syncs.Buckets, "a sync takes more than nothing, less than an hour")
	require.Equal(t, uint64(1), tm.Snapshots.Count)
	require.Equal(t, []uint64{0, 1}, tm.Snapshots.Buckets)
	require.Equal(t, uint64(len("state")), tm.SnapshotBytes)
}
