package disk

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

func op(seq uint64, value string) wire.Op {
	return wire.Op{ID: wire.OpID{Session: 9, Seq: seq}, Kind: wire.Put, Key: strconv.FormatUint(seq, 10), Value: []byte(value)}
}

func TestRecordsRoundTripAndRewrite(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	l, err := d.Records()
	require.NoError(t, err)
	ops, err := l.Load()
	require.NoError(t, err)
	require.Empty(t, ops)
	o1, o2, o3 := op(1, "a"), op(2, "b"), op(3, "c")
	l.Append(&o1, 0)
	l.Append(&o2, 1)
	require.NoError(t, l.Sync())
	l.Append(&o3, 0)
	require.NoError(t, l.Sync())
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	l, err = d.Records()
	require.NoError(t, err)
	ops, err = l.Load()
	require.NoError(t, err)
	require.Equal(t, []witness.Entry{{Op: op(1, "a")}, {Op: op(2, "b"), PrevWeak: 1}, {Op: op(3, "c")}}, ops)
	before := l.Bytes()
	require.NoError(t, l.Rewrite([]witness.Entry{{Op: op(3, "c")}}))
	require.Less(t, l.Bytes(), before)
	o4 := op(4, "d")
	l.Append(&o4, 0)
	// Syncing the raft log syncs queued records too.
	require.NoError(t, d.SaveSnapshot(snapshot(1, 1, "")))
	require.NoError(t, d.Save(hardState(1, 0, 1), nil))
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	defer d.Close()
	l, err = d.Records()
	require.NoError(t, err)
	ops, err = l.Load()
	require.NoError(t, err)
	require.Equal(t, []witness.Entry{{Op: op(3, "c")}, {Op: op(4, "d")}}, ops)
}

// A leader's marks keep their place among the records, through a
// restart and a rewrite.
func TestRecordsKeepLeadMarks(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	l, err := d.Records()
	require.NoError(t, err)
	o1, o2 := op(1, "a"), op(2, "b")
	l.Append(&o1, 0)
	l.Lead(7)
	require.NoError(t, l.Sync())
	l.Append(&o2, 1)
	l.Lead(300)
	require.NoError(t, l.Sync())
	require.NoError(t, d.Close())

	want := []witness.Entry{{Op: op(1, "a")}, {Lead: 7}, {Op: op(2, "b"), PrevWeak: 1}, {Lead: 300}}
	d = open(t, dir, nil)
	l, err = d.Records()
	require.NoError(t, err)
	got, err := l.Load()
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NoError(t, l.Rewrite(want[1:]))
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	defer d.Close()
	l, err = d.Records()
	require.NoError(t, err)
	got, err = l.Load()
	require.NoError(t, err)
	require.Equal(t, want[1:], got)
}

// writeRecords syncs five one-record frames and returns the log's path
// and where its frames end (zeros are written past that).
func writeRecords(t *testing.T, dir string) (string, int64) {
	d := open(t, dir, nil)
	l, err := d.Records()
	require.NoError(t, err)
	for i := uint64(1); i <= 5; i++ {
		o := op(i, "value-value")
		l.Append(&o, 0)
		require.NoError(t, l.Sync())
	}
	end := l.Bytes()
	require.NoError(t, d.Close())
	return filepath.Join(dir, "witness.log"), end
}

func TestRecordsTornTailIsRepaired(t *testing.T) {
	dir := t.TempDir()
	path, end := writeRecords(t, dir)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 3), end-3) // the last frame's tail never reached the disk
	require.NoError(t, err)
	require.NoError(t, f.Close())
	var log bytes.Buffer
	d := open(t, dir, &log)
	defer d.Close()
	l, err := d.Records()
	require.NoError(t, err)
	ops, err := l.Load()
	require.NoError(t, err)
	require.Len(t, ops, 4)
	require.Contains(t, log.String(), "repaired a torn write at the end of the witness log")
	// The repaired log takes new records after the last good one.
	o := op(6, "after")
	l.Append(&o, 0)
	require.NoError(t, l.Sync())
	require.NoError(t, d.Close())
	d = open(t, dir, nil)
	l, err = d.Records()
	require.NoError(t, err)
	ops, err = l.Load()
	require.NoError(t, err)
	require.Len(t, ops, 5)
	require.Equal(t, "after", string(ops[4].Op.Value))
}

func TestRecordsDamageStopsTheReplica(t *testing.T) {
	dir := t.TempDir()
	path, _ := writeRecords(t, dir)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	raw[bytes.Index(raw, []byte("value-value"))+2] ^= 1 // inside the first frame
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	d := open(t, dir, nil)
	defer d.Close()
	l, err := d.Records()
	require.NoError(t, err)
	_, err = l.Load()
	require.ErrorContains(t, err, path+" is damaged at offset 0")
}

// The core appends while its driver's writer syncs: no record is lost or
// written twice, whichever sync takes it.
func TestRecordsAppendWhileSyncing(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	l, err := d.Records()
	require.NoError(t, err)
	_, err = l.Load()
	require.NoError(t, err)
	const n = 2000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range uint64(n) {
			o := op(i+1, "v")
			l.Append(&o, 0)
		}
	}()
	for syncing := true; syncing; {
		select {
		case <-done:
			syncing = false
		default:
		}
		require.NoError(t, l.Sync())
	}
	require.False(t, l.Pending())
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	defer d.Close()
	l, err = d.Records()
	require.NoError(t, err)
	ops, err := l.Load()
	require.NoError(t, err)
	require.Len(t, ops, n)
	for i, e := range ops {
		require.Equal(t, uint64(i+1), e.Op.ID.Seq)
	}
}

// BenchmarkRecordsSync: one frame of records written and synced, as a
// follower's witness does each round under load: at 130,000 operations a
// second, half of them strong, and about 400 syncs a second, a frame holds
// some 160 records, a few KB.
func BenchmarkRecordsSync(b *testing.B) {
	d, err := Open(Options{Dir: b.TempDir(), Fsync: true})
	require.NoError(b, err)
	defer d.Close()
	l, err := d.Records()
	require.NoError(b, err)
	ops := make([]wire.Op, 160)
	for i := range ops {
		ops[i] = op(uint64(i), "")
		if i%10 == 0 {
			ops[i] = op(uint64(i), "a value of forty bytes, as the bench's..")
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for i := range ops {
			l.Append(&ops[i], 0)
		}
		if err := l.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(l.Bytes())/float64(b.N), "bytes/frame")
}
