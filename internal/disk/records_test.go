package disk

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func op(seq uint64, value string) wire.Op {
	return wire.Op{ID: wire.OpID{Session: 9, Seq: seq}, Kind: wire.Put, Key: seq, Value: []byte(value)}
}

func TestRecordsRoundTripAndRewrite(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nil)
	l, err := d.Records()
	require.NoError(t, err)
	ops, err := l.Load()
	require.NoError(t, err)
	require.Empty(t, ops)
	require.NoError(t, l.Append([]wire.Op{op(1, "a"), op(2, "b")}))
	require.NoError(t, l.Append([]wire.Op{op(3, "c")}))
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	l, err = d.Records()
	require.NoError(t, err)
	ops, err = l.Load()
	require.NoError(t, err)
	require.Equal(t, []wire.Op{op(1, "a"), op(2, "b"), op(3, "c")}, ops)
	before := l.Bytes()
	require.NoError(t, l.Rewrite([]wire.Op{op(3, "c")}))
	require.Less(t, l.Bytes(), before)
	require.NoError(t, l.Append([]wire.Op{op(4, "d")}))
	require.NoError(t, d.Close())

	d = open(t, dir, nil)
	defer d.Close()
	l, err = d.Records()
	require.NoError(t, err)
	ops, err = l.Load()
	require.NoError(t, err)
	require.Equal(t, []wire.Op{op(3, "c"), op(4, "d")}, ops)
}

func writeRecords(t *testing.T, dir string) string {
	d := open(t, dir, nil)
	l, err := d.Records()
	require.NoError(t, err)
	for i := uint64(1); i <= 5; i++ {
		require.NoError(t, l.Append([]wire.Op{op(i, "value-value")}))
	}
	require.NoError(t, d.Close())
	return filepath.Join(dir, "witness.log")
}

func TestRecordsTornTailIsRepaired(t *testing.T) {
	dir := t.TempDir()
	path := writeRecords(t, dir)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, info.Size()-3))
	var log bytes.Buffer
	d := open(t, dir, &log)
	defer d.Close()
	l, err := d.Records()
	require.NoError(t, err)
	ops, err := l.Load()
	require.NoError(t, err)
	require.Len(t, ops, 4)
	require.Contains(t, log.String(), "repaired a torn write at the end of the witness log")
}

func TestRecordsDamageStopsTheReplica(t *testing.T) {
	dir := t.TempDir()
	path := writeRecords(t, dir)
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
