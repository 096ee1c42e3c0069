package kvstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func put(sess, seq, key uint64, v string) *wire.Op {
	return &wire.Op{ID: wire.OpID{Session: sess, Seq: seq}, Kind: wire.Put, Key: keyOf(key), Value: []byte(v)}
}

func get(sess, seq, key uint64) *wire.Op {
	return &wire.Op{ID: wire.OpID{Session: sess, Seq: seq}, Kind: wire.Get, Key: keyOf(key)}
}

func TestApplyOnce(t *testing.T) {
	s := New()
	_, dup := s.Apply(1, put(7, 1, 9, "a"), 0)
	require.False(t, dup)
	s.Apply(2, put(8, 1, 9, "b"), 0)
	res, dup := s.Apply(3, put(7, 1, 9, "a"), 0)
	require.True(t, dup, "a retry is not applied again")
	require.Equal(t, uint64(1), res.Slot, "it is answered from the session table")
	v, _ := s.Read(keyOf(9))
	require.Equal(t, "b", string(v.Value))
	require.Equal(t, uint64(3), s.Applied())
}

func TestForgetAcknowledged(t *testing.T) {
	s := New()
	s.Apply(1, put(7, 1, 9, "a"), 0)
	s.Apply(2, get(7, 2, 9), 2) // the client saw seq 1 complete
	_, outcome := s.Lookup(wire.OpID{Session: 7, Seq: 1})
	require.Equal(t, Forgotten, outcome)
	_, dup := s.Apply(3, put(7, 1, 9, "late"), 2)
	require.True(t, dup, "a forgotten operation arriving late is skipped everywhere")
	v, _ := s.Read(keyOf(9))
	require.Equal(t, "a", string(v.Value))
	res, outcome := s.Lookup(wire.OpID{Session: 7, Seq: 2})
	require.Equal(t, Applied, outcome)
	require.True(t, res.Found)
}

// TestOverwrittenWriteStaysOut: a write its session's later write of the
// same key overwrote before it took effect is a duplicate when a copy of
// it comes: the later value stays.
func TestOverwrittenWriteStaysOut(t *testing.T) {
	s := New()
	s.Apply(5, put(7, 4, 9, "b"), 0)
	require.True(t, s.Overwritten(wire.OpID{Session: 7, Seq: 2}, 5))
	require.False(t, s.Overwritten(wire.OpID{Session: 7, Seq: 4}, 5), "an applied write is known already")
	res, dup := s.Apply(8, put(7, 2, 9, "a"), 0)
	require.True(t, dup, "the late copy is not applied")
	require.Equal(t, uint64(5), res.Slot)
	v, _ := s.Read(keyOf(9))
	require.Equal(t, "b", string(v.Value))
	s.Apply(9, get(7, 6, 9), 3)
	require.False(t, s.Overwritten(wire.OpID{Session: 7, Seq: 1}, 9), "below the floor: forgotten")
}

// TestDigestIsTheContents: the digest covers each key's value, the slot
// that wrote it, its creation slot and its version, not how the store got
// there; a write applied at another slot, even of the same value, shows,
// and so does a key written more often or created at another slot.
func TestDigestIsTheContents(t *testing.T) {
	a, b, c, d := New(), New(), New(), New()
	a.Apply(1, put(1, 1, 1, "x"), 0)
	a.Apply(4, put(1, 2, 2, "y"), 0)
	b.Apply(2, put(1, 1, 2, "w"), 0)
	b.Apply(3, &wire.Op{ID: wire.OpID{Session: 1, Seq: 2}, Kind: wire.Delete, Key: keyOf(2)}, 0)
	b.Apply(4, put(1, 3, 2, "y"), 0)
	b.Apply(1, put(1, 4, 1, "x"), 0) // out of slot order
	require.Equal(t, a.Digest(), b.Digest(), "key 2 was created again at 4, and key 1 written once at 1")
	b.Apply(5, put(1, 5, 2, "z"), 0)
	require.NotEqual(t, a.Digest(), b.Digest())
	c.Apply(1, put(1, 1, 1, "x"), 0)
	c.Apply(2, put(1, 2, 2, "y"), 0)
	require.NotEqual(t, a.Digest(), c.Digest(), "the same value written at another slot")
	d.Apply(1, put(1, 1, 1, "x"), 0)
	d.Apply(3, put(1, 2, 2, "y"), 0)
	d.Apply(4, put(1, 3, 2, "y"), 0)
	require.NotEqual(t, a.Digest(), d.Digest(), "the same value at the same slot, at version 2 and created at 3")
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := New()
	s.Apply(1, put(7, 1, 9, "a"), 0)
	s.Apply(2, get(7, 2, 9), 0)
	s.Apply(3, put(8, 1, 4, ""), 0)
	s.Apply(4, put(8, 2, 9, "b"), 0)
	r, err := Restore(s.Snapshot())
	require.NoError(t, err)
	require.Equal(t, s.Digest(), r.Digest())
	require.Equal(t, s.Applied(), r.Applied())
	require.Equal(t, s.Len(), r.Len())
	require.Equal(t, []wire.KeyValue{kv(keyOf(4), "", 3, 3, 1), kv(keyOf(9), "b", 1, 4, 2)}, versions(r))
	_, dup := r.Apply(4, put(7, 1, 9, "a"), 0)
	require.True(t, dup, "the session table survives the snapshot")
	snap := s.Snapshot()
	for i := range snap {
		_, err := Restore(snap[:i])
		require.Error(t, err, "prefix %d", i)
	}
}

// TestSessionTableSize: sessions stay while active; results go once the
// client acknowledged them.
func TestSessionTableSize(t *testing.T) {
	s := New()
	require.Zero(t, s.Sessions())
	require.Zero(t, s.Replies())
	s.Apply(1, put(7, 1, 9, "a"), 0)
	s.Apply(2, put(7, 2, 9, "b"), 0)
	s.Apply(3, put(8, 1, 9, "c"), 0)
	require.Equal(t, 2, s.Sessions())
	require.Equal(t, 3, s.Replies())
	s.Apply(4, get(7, 3, 9), 3) // the client saw seqs 1 and 2 complete
	require.Equal(t, 2, s.Sessions())
	require.Equal(t, 2, s.Replies())
}

// TestIdleSessionsExpire: a clock entry forgets the sessions that applied
// nothing for the expiry, and only those; a forgotten session's next
// operation opens it again.
func TestIdleSessionsExpire(t *testing.T) {
	s := New()
	s.Tick(1, 10, 100)
	s.Apply(2, put(7, 1, 9, "a"), 0) // active at 10
	s.Tick(3, 50, 100)
	s.Apply(4, put(8, 1, 9, "b"), 0) // active at 50
	s.Tick(5, 109, 100)
	require.Equal(t, 2, s.Sessions(), "session 7 has been idle for 99 ticks")
	s.Tick(6, 110, 100)
	require.Equal(t, 1, s.Sessions(), "session 7 has been idle for 100 ticks")
	_, outcome := s.Lookup(wire.OpID{Session: 8, Seq: 1})
	require.Equal(t, Applied, outcome)
	_, outcome = s.Lookup(wire.OpID{Session: 7, Seq: 1})
	require.Equal(t, Unknown, outcome, "its results went with it")
	require.Zero(t, s.Floor(7))

	s.Tick(7, 20, 100)
	require.Equal(t, uint64(110), s.Clock(), "the clock never goes back")
	require.Equal(t, uint64(7), s.Applied())
	s.Tick(8, 500, 0)
	require.Equal(t, 1, s.Sessions(), "zero expiry forgets nothing")

	_, dup := s.Apply(9, put(7, 2, 9, "c"), 2)
	require.False(t, dup)
	require.Equal(t, 2, s.Sessions(), "a forgotten session's next operation opens it again")
	require.Equal(t, uint64(2), s.Floor(7))
	s.Tick(10, 599, 100)
	require.Equal(t, 1, s.Sessions(), "session 8, idle since 50, goes; session 7, active at 500, stays")
}

// TestSnapshotKeepsTheClock: a restored replica forgets the same sessions
// at the same clock entry as one that never stopped.
func TestSnapshotKeepsTheClock(t *testing.T) {
	s := New()
	s.Tick(1, 40, 100)
	s.Apply(2, put(7, 1, 9, "a"), 0)
	s.Tick(3, 90, 100)
	s.Apply(4, put(8, 1, 9, "b"), 0)
	r, err := Restore(s.Snapshot())
	require.NoError(t, err)
	require.Equal(t, uint64(90), r.Clock())
	for _, st := range []*Store{s, r} {
		st.Tick(5, 140, 100)
		require.Equal(t, 1, st.Sessions())
		_, outcome := st.Lookup(wire.OpID{Session: 8, Seq: 1})
		require.Equal(t, Applied, outcome)
	}
}

// TestOldSnapshotsAreRefused: a snapshot of a version with integer keys,
// the clocked format or the one before it, is refused as such rather than
// read as garbage.
func TestOldSnapshotsAreRefused(t *testing.T) {
	var preClock []byte
	for _, v := range []uint64{
		300,          // applied
		1, 9, 299, 1, // one key, 9, written at slot 299, one byte long ...
	} {
		preClock = binary.AppendUvarint(preClock, v)
	}
	preClock = append(preClock, 'a', 0)
	clocked := append([]byte{0}, preClock...)
	for _, b := range [][]byte{preClock, clocked} {
		_, err := Restore(b)
		require.ErrorIs(t, err, errOldFormat)
	}
	_, err := Restore(nil)
	require.ErrorIs(t, err, errSnapshot)
	_, err = Restore([]byte(formatMark + "\x07"))
	require.ErrorContains(t, err, "unknown format 7")

	// The first keyed format, whose keys had no creation slot or version:
	// applied 300, clock 0, one key "a" written at 299 with "v", no
	// session.
	keyed := []byte(formatMark + "\x01" + "\xac\x02\x00\x01" + "\x01a\xab\x02\x01v" + "\x00")
	_, err = Restore(keyed)
	require.ErrorIs(t, err, errNoRevisions)
	s := New()
	s.Apply(299, putKey(299, "a", "v"), 0)
	s.Apply(300, get(1, 1, 1), 0)
	s.sessions = map[uint64]*session{}
	require.Equal(t, string(keyed[3:11])+"\xab\x02\x01"+string(keyed[11:]), string(s.Snapshot()[3:]),
		"the keyed format is this one without the creation slot and version")
}

// BenchmarkSnapshot encodes a state of 200,000 keys of 100 bytes and 1,500
// sessions, the size a ten-minute benchmark run reaches. Each value is
// its own, as each write's is: one value shared by every key would sit in
// the cache throughout.
func BenchmarkSnapshot(b *testing.B) {
	s := New()
	slot := uint64(0)
	for k := range uint64(200_000) {
		slot++
		s.Apply(slot, &wire.Op{ID: wire.OpID{Session: k%1500 + 1, Seq: k/1500 + 1}, Kind: wire.Put, Key: keyOf(k * 7919), Value: make([]byte, 100)}, 0)
	}
	b.ResetTimer()
	for b.Loop() {
		_ = s.Snapshot()
	}
}

// TestSnapshotSizeBound: the size a snapshot reserves, kept up to date as
// values are overwritten and restored, bounds the encoding, so it is
// written into one allocation.
func TestSnapshotSizeBound(t *testing.T) {
	s := New()
	s.Apply(1, put(7, 1, 9, "a long first value"), 0)
	s.Apply(2, put(7, 2, 9, "b"), 0)
	s.Apply(3, put(8, 1, 4, "another value"), 0)
	sum := func(st *Store) (n int) {
		for _, e := range st.entries() {
			n += int(e.n)
		}
		return n
	}
	require.Equal(t, sum(s), s.vals.live)
	f := s.Freeze()
	snap := f.Encode()
	require.LessOrEqual(t, len(snap), f.size())
	require.Equal(t, 1.0, testing.AllocsPerRun(10, func() { _ = f.Encode() }))
	s.Thaw()
	r, err := Restore(snap)
	require.NoError(t, err)
	require.Equal(t, sum(r), r.vals.live)
}

// TestFrozenStateIsEncodedWhileTheStoreApplies: a frozen view encodes the
// state of its Freeze, on another goroutine, while the store applies
// writes that reads see at once; Thaw folds them in once the encoding is
// done, and not before.
func TestFrozenStateIsEncodedWhileTheStoreApplies(t *testing.T) {
	s := New()
	slot := uint64(0)
	for k := range uint64(1000) {
		slot++
		s.Apply(slot, put(1, k+1, k, "old"), 0)
	}
	before := s.Digest()
	f := s.Freeze()
	require.True(t, s.Frozen())
	encoded := make(chan []byte)
	go func() { encoded <- f.Encode() }()
	for k := range uint64(1500) { // 500 new keys, 1000 overwritten
		slot++
		s.Apply(slot, put(2, k+1, k, "new"), 0)
		v, ok := s.Read(keyOf(k))
		require.True(t, ok)
		require.Equal(t, "new", string(v.Value))
	}
	require.Equal(t, 1500, s.Len())
	s.Thaw() // may come before the encoding ends: then it waits for the next
	snap := <-encoded
	require.False(t, s.Frozen())
	s.Thaw()
	require.Nil(t, s.overlay)
	require.Len(t, s.entries(), 1500)
	for k := range uint64(1500) {
		v, _ := s.Read(keyOf(k))
		require.Equal(t, "new", string(v.Value))
		if k < 1000 {
			require.Equal(t, Version{Value: []byte("new"), Slot: 1001 + k, Create: k + 1, Version: 2}, v, "overwritten while frozen")
		} else {
			require.Equal(t, Version{Value: []byte("new"), Slot: 1001 + k, Create: 1001 + k, Version: 1}, v, "created while frozen")
		}
	}

	r, err := Restore(snap)
	require.NoError(t, err)
	require.Equal(t, 1000, r.Len())
	require.Equal(t, before, r.Digest(), "the snapshot holds a write made after the freeze")
	v, _ := r.Read(keyOf(7))
	require.Equal(t, Version{Value: []byte("old"), Slot: 8, Create: 8, Version: 1}, v)
	require.Equal(t, uint64(1000), r.Applied())
	_, outcome := r.Lookup(wire.OpID{Session: 2, Seq: 1})
	require.Equal(t, Unknown, outcome, "the snapshot's session table holds a write made after the freeze")

	// A view encoded and not yet folded in does not hold up the next.
	f = s.Freeze()
	f.Encode()
	require.NotPanics(t, func() { s.Freeze().Encode() })
	s.Thaw()

	again, err := Restore(s.Snapshot())
	require.NoError(t, err)
	require.Equal(t, s.Digest(), again.Digest())
	require.Equal(t, 1500, again.Len())
}

// chunkWriter records the size of each write it is handed.
type chunkWriter struct {
	bytes.Buffer
	writes []int
	failAt int // the write that fails, 0 for none
}

func (w *chunkWriter) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	if len(w.writes) == w.failAt {
		return 0, errors.New("disk full")
	}
	return w.Buffer.Write(b)
}

// TestWriteToStreamsInChunks: WriteTo writes what Encode returns, a chunk
// at a time rather than in one buffer the size of the state, and stops at
// the first failed write.
func TestWriteToStreamsInChunks(t *testing.T) {
	s := New()
	value := strings.Repeat("v", 100)
	for i := uint64(1); i <= 30_000; i++ {
		s.Apply(i, put(i%50+1, i, i, value), 0)
	}
	f := s.Freeze()
	var w chunkWriter
	n, err := f.WriteTo(&w)
	require.NoError(t, err)
	require.Equal(t, int64(w.Len()), n)
	require.Greater(t, len(w.writes), 2, "a 3 MB state is written in chunks")
	for _, size := range w.writes {
		require.Less(t, size, 2*writeChunk)
	}
	s.Thaw()
	r, err := Restore(w.Bytes())
	require.NoError(t, err)
	require.Equal(t, s.Digest(), r.Digest())
	require.Equal(t, s.Len(), r.Len())
	require.Equal(t, s.Replies(), r.Replies())
	require.Equal(t, len(s.Snapshot()), w.Len())

	failing := chunkWriter{failAt: 2}
	_, err = s.Freeze().WriteTo(&failing)
	require.ErrorContains(t, err, "disk full")
	require.Len(t, failing.writes, 2)
	s.Thaw()
}

// TestRestoreUnordered: a leaderless protocol's slots name writes without
// ordering them, so a key may be created at a higher slot than a later
// write to it; Restore refuses such a snapshot (from a log it would be
// corrupt), RestoreUnordered takes it.
func TestRestoreUnordered(t *testing.T) {
	s := New()
	s.Apply(900, &wire.Op{ID: wire.OpID{Session: 1, Seq: 1}, Kind: wire.Put, Key: "k", Value: []byte("a")}, 0)
	s.Apply(100, &wire.Op{ID: wire.OpID{Session: 1, Seq: 2}, Kind: wire.Put, Key: "k", Value: []byte("b")}, 0)
	_, err := Restore(s.Snapshot())
	require.Error(t, err)
	r, err := RestoreUnordered(s.Snapshot())
	require.NoError(t, err)
	require.Equal(t, s.Digest(), r.Digest())
}
