package disk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
)

// savedState leaves a data directory whose newest snapshot, at index 3,
// holds state, and returns the path of its state file.
func savedState(t *testing.T, dir, state string) string {
	t.Helper()
	d := open(t, dir, nil)
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	require.NoError(t, d.Save(hardState(1, 0, 3), []*raftpb.Entry{entry(2, 1, "a"), entry(3, 1, "b")}))
	require.NoError(t, d.SaveCompaction(snapshot(3, 1, ""), encoded(state)))
	require.NoError(t, d.Close())
	return filepath.Join(dir, "snap", stateName(1, 3))
}

// loadState opens dir and reads its newest snapshot's state.
func loadState(t *testing.T, dir string) ([]byte, error) {
	t.Helper()
	d := open(t, dir, nil)
	defer d.Close()
	st, err := d.Load()
	require.NoError(t, err)
	require.Equal(t, uint64(3), st.Snapshot.GetMetadata().GetIndex())
	return d.SnapshotData(st.Snapshot.GetMetadata())
}

// TestStateFileIsChecked: a snapshot's state file that was damaged,
// truncated or removed stops the replica with an error naming the file,
// rather than starting it from a wrong state.
func TestStateFileIsChecked(t *testing.T) {
	state := strings.Repeat("the applied state ", 1000)
	for _, tc := range []struct {
		name   string
		damage func(path string)
		want   string
	}{
		{"intact", func(string) {}, ""},
		{"flipped byte", func(path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			b[len(b)/2] ^= 0x40
			require.NoError(t, os.WriteFile(path, b, 0o644))
		}, "fails its CRC check"},
		{"truncated", func(path string) { require.NoError(t, os.Truncate(path, 100)) }, "holds 100 bytes"},
		{"removed", func(path string) { require.NoError(t, os.Remove(path)) }, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := savedState(t, dir, state)
			tc.damage(path)
			data, err := loadState(t, dir)
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, state, string(data))
				return
			}
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, stateName(1, 3))
		})
	}
}

// TestHalfWrittenStateFileIsIgnored: a crash while a state file was being
// written leaves a temporary file that nothing points at; the previous
// snapshot is used, and the next snapshot removes the leftover.
func TestHalfWrittenStateFileIsIgnored(t *testing.T) {
	dir := t.TempDir()
	path := savedState(t, dir, "state@3")
	leftover := filepath.Join(dir, "snap", stateName(1, 9)+".tmp")
	require.NoError(t, os.WriteFile(leftover, []byte("half"), 0o644))
	data, err := loadState(t, dir)
	require.NoError(t, err)
	require.Equal(t, "state@3", string(data))

	d := open(t, dir, nil)
	defer d.Close()
	_, err = d.Load()
	require.NoError(t, err)
	require.NoError(t, d.Save(hardState(1, 0, 4), []*raftpb.Entry{entry(4, 1, "c")}))
	require.NoError(t, d.SaveSnapshot(snapshot(4, 1, "state@4")))
	require.NoFileExists(t, leftover)
	require.FileExists(t, path, "the previous snapshot's state is kept with it")
}

// TestSnapshotWithInlineState: a snapshot file that holds its state itself
// (as data directories written before state files did) still loads.
func TestSnapshotWithInlineState(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	require.NoError(t, d.Save(hardState(1, 0, 3), []*raftpb.Entry{entry(2, 1, "a"), entry(3, 1, "b")}))
	require.NoError(t, d.snaps.SaveSnap(snapshot(3, 1, "inline state")))
	require.NoError(t, d.w.SaveSnapshot(&walpb.Snapshot{Index: new(uint64(3)), Term: new(uint64(1)),
		ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}))
	require.NoError(t, d.Close())

	data, err := loadState(t, dir)
	require.NoError(t, err)
	require.Equal(t, "inline state", string(data))
}
