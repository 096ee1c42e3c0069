package disk

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3/raftpb"
)

// TestCompactionsWhileTheLogGrows: compaction snapshots are written in the
// background while entries keep being saved (run with -race); a restart
// loads the newest one written and every entry after it, and a snapshot
// from the leader, saved before SaveSnapshot returns, waits for the
// background writer.
func TestCompactionsWhileTheLogGrows(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	index := uint64(1)
	for round := range 20 {
		for range 50 {
			index++
			require.NoError(t, d.Save(hardState(1, 0, index), []*raftpb.Entry{entry(index, 1, "x")}))
		}
		require.NoError(t, d.SaveCompaction(snapshot(index, 1, ""), encoded(fmt.Sprintf("state@%d", index))), "round %d", round)
	}
	index++
	require.NoError(t, d.SaveSnapshot(snapshot(index, 2, "from the leader")))
	for range 10 {
		index++
		require.NoError(t, d.Save(hardState(2, 0, index), []*raftpb.Entry{entry(index, 2, "y")}))
	}
	require.NoError(t, d.SaveCompaction(snapshot(index-5, 2, ""), encoded("last")))
	require.NoError(t, d.Close())
	done := d.Compacted()
	require.NotNil(t, done, "Compacted returns the snapshot written")
	require.Equal(t, index-5, done.GetMetadata().GetIndex())
	require.Empty(t, done.GetData(), "the data stays on the disk")
	require.Nil(t, d.Compacted(), "Compacted returns a snapshot once")

	d = open(t, dir, nil)
	defer d.Close()
	st, err := d.Load()
	require.NoError(t, err)
	require.Equal(t, index-5, st.Snapshot.GetMetadata().GetIndex(), "Close waits for the background writer")
	require.Empty(t, st.Snapshot.GetData(), "Load leaves the data on the disk")
	data, err := d.SnapshotData(st.Snapshot.GetMetadata())
	require.NoError(t, err)
	require.Equal(t, "last", string(data))
	require.Len(t, st.Entries, 5)
	require.Equal(t, index, st.Entries[4].GetIndex())
}

// encoded is a snapshot's state for tests.
func encoded(data string) io.WriterTo { return strings.NewReader(data) }
