package kvstore

import (
	"bytes"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// kv is a key's version as a transaction reports it.
func kv(key, value string, create, mod, version uint64) wire.KeyValue {
	var v []byte
	if value != "" {
		v = []byte(value)
	}
	return wire.KeyValue{Key: key, Value: v, Create: create, Mod: mod, Version: version}
}

// versions returns every key's version, as Range hands them out.
func versions(s *Store) []wire.KeyValue {
	var kvs []wire.KeyValue
	s.Range("", NoEnd, 0, func(k string, v Version) bool {
		kvs = append(kvs, kv(k, string(v.Value), v.Create, v.Slot, v.Version))
		return true
	})
	return kvs
}

// TestEntryFitsARecordInACacheLine: the creation slot and the version
// leave a key table record at 64 bytes.
func TestEntryFitsARecordInACacheLine(t *testing.T) {
	require.Equal(t, uintptr(32), unsafe.Sizeof(entry{}))
	require.Equal(t, uintptr(64), unsafe.Sizeof(rec{}))
}

// TestCreateAndVersion: a key's creation slot and version across put,
// put, delete, put, by single-key operations and by transactions alike;
// an absent key's are zero.
func TestCreateAndVersion(t *testing.T) {
	type step struct {
		op   func(slot uint64) *wire.Op
		want Version // of key "k" after the step
		ok   bool
	}
	plain := []step{
		{func(slot uint64) *wire.Op { return putKey(slot, "k", "a") }, Version{[]byte("a"), 1, 1, 1}, true},
		{func(slot uint64) *wire.Op { return putKey(slot, "k", "b") }, Version{[]byte("b"), 2, 1, 2}, true},
		{func(slot uint64) *wire.Op { return delKey(slot, "k") }, Version{}, false},
		{func(slot uint64) *wire.Op { return putKey(slot, "k", "c") }, Version{[]byte("c"), 4, 4, 1}, true},
		{func(slot uint64) *wire.Op { return putKey(slot, "k", "") }, Version{nil, 5, 4, 2}, true},
	}
	inTxn := func(o wire.TxnOp) func(uint64) *wire.Op {
		return func(slot uint64) *wire.Op { return txn(slot, &wire.Transaction{Then: []wire.TxnOp{o}}) }
	}
	txns := []step{
		{inTxn(putOp("k", "a")), plain[0].want, true},
		{inTxn(putOp("k", "b")), plain[1].want, true},
		{inTxn(delOp("k", "")), Version{}, false},
		{inTxn(putOp("k", "c")), plain[3].want, true},
		{inTxn(putOp("k", "")), plain[4].want, true},
	}
	for name, steps := range map[string][]step{"operations": plain, "transactions": txns} {
		s := New()
		for i, st := range steps {
			slot := uint64(i + 1)
			s.Apply(slot, st.op(slot), 0)
			v, ok := s.Read("k")
			require.Equal(t, st.ok, ok, "%s: step %d", name, i)
			require.Equal(t, st.want, v, "%s: step %d", name, i)
		}
	}
}

// TestVersionStops: a version at its top stays there rather than wrap to
// 0, which would mark the key absent.
func TestVersionStops(t *testing.T) {
	s := New()
	s.Apply(1, putKey(1, "k", "a"), 0)
	_, id := s.table.find("k")
	s.digest ^= entryHash("k", &s.table.recs[id].val, []byte("a"))
	s.table.recs[id].val.version = maxVersion - 1
	s.digest ^= entryHash("k", &s.table.recs[id].val, []byte("a"))
	for slot := uint64(2); slot <= 4; slot++ {
		s.Apply(slot, putKey(slot, "k", "b"), 0)
	}
	v, ok := s.Read("k")
	require.True(t, ok)
	require.Equal(t, Version{[]byte("b"), 4, 1, maxVersion}, v)
	r, err := Restore(s.Snapshot())
	require.NoError(t, err)
	require.Equal(t, s.Digest(), r.Digest())
	v, _ = r.Read("k")
	require.Equal(t, uint64(maxVersion), v.Version)
}

// TestSnapshotKeepsRevisions: a restored store has each key's creation
// slot and version, and answers a transaction as the store it was taken
// from does; a snapshot whose key is at version 0, or created after its
// last write, is refused.
func TestSnapshotKeepsRevisions(t *testing.T) {
	s := New()
	s.Apply(1, putKey(1, "k", "a"), 0)
	s.Apply(2, putKey(2, "k", "b"), 0)
	s.Apply(3, delKey(3, "k"), 0)
	s.Apply(4, putKey(4, "k", "c"), 0)
	s.Apply(5, putKey(5, "j", "x"), 0)
	s.Apply(6, putKey(6, "j", "y"), 0)
	s.Apply(7, putKey(7, "j", "z"), 0)
	s.Apply(8, putKey(8, "i", ""), 0)
	want := []wire.KeyValue{kv("i", "", 8, 8, 1), kv("j", "z", 5, 7, 3), kv("k", "c", 4, 4, 1)}
	require.Equal(t, want, versions(s))
	snap := s.Snapshot()
	r, err := Restore(snap)
	require.NoError(t, err)
	require.Equal(t, want, versions(r))
	require.Equal(t, s.Digest(), r.Digest())
	tx := txn(9, &wire.Transaction{
		Compares: []wire.Compare{{Key: "j", Target: wire.CompareVersion, Result: wire.Equal, Number: 3}},
		Then:     []wire.TxnOp{{Kind: wire.Put, Key: "j", Value: []byte("w"), PrevKV: true}, getOp("", NoEnd)},
	})
	r1, _ := s.Apply(9, tx, 0)
	r2, _ := r.Apply(9, tx, 0)
	require.True(t, r1.Found)
	require.Equal(t, r1, r2)

	// The one key's version, then its value: a zero version, and a
	// creation slot past the last write, are corrupt.
	one := New()
	one.Apply(3, putKey(3, "k", "v"), 0)
	good := one.Snapshot()
	at := bytes.Index(good, []byte("k\x03\x03\x01\x01v")) + 1
	require.Positive(t, at)
	for name, corrupt := range map[string][]byte{"version 0": {3, 3, 0}, "created after": {3, 4, 1}} {
		b := slices.Concat(good[:at], corrupt, good[at+3:])
		_, err := Restore(b)
		require.ErrorIs(t, err, errSnapshot, name)
		require.ErrorContains(t, err, "created at", name)
	}
}
