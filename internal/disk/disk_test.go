package disk

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/server/v3/etcdserver/api/snap"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
)

func entry(index, term uint64, data string) *raftpb.Entry {
	return &raftpb.Entry{Index: new(index), Term: new(term), Data: []byte(data)}
}

func hardState(term, vote, commit uint64) *raftpb.HardState {
	return &raftpb.HardState{Term: new(term), Vote: new(vote), Commit: new(commit)}
}

func snapshot(index, term uint64, data string) *raftpb.Snapshot {
	return &raftpb.Snapshot{Data: []byte(data), Metadata: &raftpb.SnapshotMetadata{
		Index: new(index), Term: new(term), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}}
}

func open(t *testing.T, dir string, log *bytes.Buffer) *Disk {
	t.Helper()
	opts := Options{Dir: dir, Fsync: true}
	if log != nil {
		opts.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	d, err := Open(opts)
	require.NoError(t, err)
	return d
}

func indexes(ents []*raftpb.Entry) (out [][2]uint64) {
	for _, e := range ents {
		out = append(out, [2]uint64{e.GetIndex(), e.GetTerm()})
	}
	return out
}

// TestRoundTrip: what was saved, overwrites of an uncommitted suffix and a
// snapshot included, is what a restart loads.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	st, err := d.Load()
	require.NoError(t, err)
	require.True(t, st.Blank())
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	require.NoError(t, d.Save(hardState(1, 0, 1), nil))
	require.NoError(t, d.Save(hardState(2, 1, 4), []*raftpb.Entry{entry(2, 2, "a"), entry(3, 2, "b"), entry(4, 2, "c")}))
	require.NoError(t, d.Save(nil, []*raftpb.Entry{entry(5, 2, "d"), entry(6, 2, "e"), entry(7, 2, "f"), entry(8, 2, "g")}))
	require.NoError(t, d.Save(hardState(3, 2, 5), []*raftpb.Entry{entry(6, 3, "E"), entry(7, 3, "F")}))
	require.NoError(t, d.SaveSnapshot(snapshot(4, 2, "state@4")))
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	defer d.Close()
	st, err = d.Load()
	require.NoError(t, err)
	require.Equal(t, uint64(4), st.Snapshot.GetMetadata().GetIndex())
	data, err := d.SnapshotData(st.Snapshot.GetMetadata())
	require.NoError(t, err)
	require.Equal(t, "state@4", string(data))
	require.Equal(t, [3]uint64{3, 2, 5}, [3]uint64{st.HardState.GetTerm(), st.HardState.GetVote(), st.HardState.GetCommit()})
	require.Equal(t, [][2]uint64{{5, 2}, {6, 3}, {7, 3}}, indexes(st.Entries))
	require.Equal(t, "E", string(st.Entries[1].GetData()))
	require.Zero(t, d.Stats().Snapshots, "statistics count this run only")
}

// TestSnapshotBeyondTheLog: a follower that receives a leader's snapshot
// past its log's end keeps it and the entries after it.
func TestSnapshotBeyondTheLog(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	require.NoError(t, d.Save(hardState(1, 0, 1), []*raftpb.Entry{entry(2, 1, "a"), entry(3, 1, "b")}))
	require.NoError(t, d.SaveSnapshot(snapshot(100, 4, "state@100")))
	var ents []*raftpb.Entry
	for i := uint64(101); i <= 110; i++ {
		ents = append(ents, entry(i, 4, "x"))
	}
	require.NoError(t, d.Save(hardState(4, 2, 105), ents))
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	defer d.Close()
	st, err := d.Load()
	require.NoError(t, err)
	require.Equal(t, uint64(100), st.Snapshot.GetMetadata().GetIndex())
	require.Len(t, st.Entries, 10)
	require.Equal(t, uint64(101), st.Entries[0].GetIndex())
}

// TestSnapshotFileWithoutMarker: a crash after the snapshot file was
// written but before the log marked it leaves the previous snapshot in use.
func TestSnapshotFileWithoutMarker(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	require.NoError(t, d.Save(hardState(1, 0, 3), []*raftpb.Entry{entry(2, 1, "a"), entry(3, 1, "b")}))
	require.NoError(t, snap.New(zap.NewNop(), filepath.Join(dir, "snap")).SaveSnap(snapshot(3, 1, "unmarked")))
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	defer d.Close()
	st, err := d.Load()
	require.NoError(t, err)
	require.Equal(t, uint64(1), st.Snapshot.GetMetadata().GetIndex())
	require.Len(t, st.Entries, 2)
}

func TestTwoServersOnOneDir(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	_, err := Open(Options{Dir: dir})
	require.ErrorContains(t, err, "is in use by another hybridkv server (pid ")
	require.NoError(t, d.Close())
	d = open(t, dir, nil) // released on Close
	require.NoError(t, d.Close())
}

// writeLog saves n one-entry batches and returns the log's only segment.
func writeLog(t *testing.T, dir string, n int) string {
	t.Helper()
	d := open(t, dir, nil)
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	require.NoError(t, d.Save(hardState(1, 0, 1), nil))
	// Entries alone, so the last record written is the last entry.
	for i := 2; i < n+2; i++ {
		require.NoError(t, d.Save(nil, []*raftpb.Entry{entry(uint64(i), 1, "payload-payload-payload")}))
	}
	require.NoError(t, d.Close())
	segs, err := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	return segs[0]
}

// lastRecordEnd is where the log's written records end (the segment is
// preallocated with zeros after them).
func lastRecordEnd(t *testing.T, seg string) int64 {
	off, _, err := scanSegment(seg, 0)
	require.NoError(t, err)
	return off
}

// TestTornTailIsRepaired: a crash in the middle of writing the last record
// leaves part of it; the start repairs the log, says so, and loses only that
// record.
func TestTornTailIsRepaired(t *testing.T) {
	dir := t.TempDir()
	seg := writeLog(t, dir, 10)
	end := lastRecordEnd(t, seg)
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	require.NoError(t, err)
	// The last record's tail never reached the disk.
	require.NoError(t, f.Truncate(end-10))
	require.NoError(t, f.Close())

	var log bytes.Buffer
	d := open(t, dir, &log)
	st, err := d.Load()
	require.NoError(t, err)
	require.Contains(t, log.String(), "repaired a torn write at the end of the write-ahead log")
	require.Contains(t, log.String(), seg)
	last := st.Entries[len(st.Entries)-1].GetIndex()
	require.Equal(t, uint64(10), last, "entry 11 was torn; only it must be dropped")
	// The repaired log takes new writes and keeps them.
	require.NoError(t, d.Save(hardState(1, 0, last+1), []*raftpb.Entry{entry(last+1, 1, "after")}))
	require.NoError(t, d.Close())
	d = open(t, dir, nil)
	defer d.Close()
	st, err = d.Load()
	require.NoError(t, err)
	require.Equal(t, "after", string(st.Entries[len(st.Entries)-1].GetData()))
}

// TestCorruptRecordStopsTheReplica: a flipped byte inside the log is
// refused with the segment and offset, never skipped.
func TestCorruptRecordStopsTheReplica(t *testing.T) {
	dir := t.TempDir()
	seg := writeLog(t, dir, 10)
	raw, err := os.ReadFile(seg)
	require.NoError(t, err)
	at := bytes.Index(raw, []byte("payload-payload-payload"))
	require.Positive(t, at)
	raw[at+3] ^= 0x20
	require.NoError(t, os.WriteFile(seg, raw, 0o600))

	d := open(t, dir, nil)
	defer d.Close()
	_, err = d.Load()
	require.Error(t, err)
	require.Contains(t, err.Error(), seg)
	require.Contains(t, err.Error(), "offset")
	require.Contains(t, err.Error(), "refusing to start")
	t.Log(err)
}

// TestSnapshotsBoundTheDisk: old segments and snapshots are removed once a
// newer snapshot covers them.
func TestSnapshotsBoundTheDisk(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	defer d.Close()
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	big := string(bytes.Repeat([]byte{'v'}, 1<<20))
	index := uint64(1)
	for range 5 {
		for range 80 { // 80 MB: past one 64 MB segment
			index++
			require.NoError(t, d.Save(hardState(1, 0, index), []*raftpb.Entry{entry(index, 1, big)}))
		}
		require.NoError(t, d.SaveSnapshot(snapshot(index, 1, "state")))
	}
	segs, err := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	require.NoError(t, err)
	require.LessOrEqual(t, len(segs), 2, "released segments were kept")
	snaps, err := filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
	require.NoError(t, err)
	require.Len(t, snaps, keepSnapshots)
	states, err := filepath.Glob(filepath.Join(dir, "snap", "*.state"))
	require.NoError(t, err)
	require.Len(t, states, keepSnapshots, "the states of removed snapshots were kept")
	st := d.Stats()
	require.Equal(t, uint64(6), st.Snapshots)
	require.LessOrEqual(t, st.WALBytes, int64(2*64<<20))
	require.Positive(t, st.Syncs)
	require.Positive(t, st.SyncP99)
}

// TestNoFsyncRoundTrip: without syncing, a clean close still keeps
// everything.
func TestNoFsyncRoundTrip(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	require.NoError(t, d.Save(hardState(2, 1, 2), []*raftpb.Entry{entry(2, 2, "a")}))
	require.Zero(t, d.Stats().Syncs)
	require.False(t, d.Stats().Fsync)
	require.NoError(t, d.Close())
	d = open(t, dir, nil)
	defer d.Close()
	st, err := d.Load()
	require.NoError(t, err)
	require.Len(t, st.Entries, 1)
	require.Equal(t, uint64(2), st.HardState.GetTerm())
}
