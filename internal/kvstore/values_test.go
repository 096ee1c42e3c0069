package kvstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// checkChunks asserts the chunks' bookkeeping against the index: each
// chunk's live bytes are those of the entries pointing into it, and the
// totals add up.
func checkChunks(t *testing.T, s *Store) {
	t.Helper()
	require.Nil(t, s.overlay, "checked thawed")
	var vals, keys []ref
	for _, e := range s.entries() {
		vals = append(vals, e.ref)
	}
	for _, r := range s.table.recs[1:] {
		if !r.val.deleted() {
			keys = append(keys, r.key)
		}
	}
	require.Len(t, keys, s.Len())
	for _, a := range []struct {
		arena *arena
		refs  []ref
	}{{&s.vals, vals}, {&s.table.keys, keys}} {
		live := make(map[uint32]int)
		total := 0
		for _, r := range a.refs {
			live[r.chunk] += int(r.n)
			total += int(r.n)
		}
		held := 0
		for id, c := range a.arena.chunks {
			require.Equal(t, live[uint32(id)], c.live, "chunk %d's live bytes", id)
			held += len(c.bytes)
		}
		require.Equal(t, total, a.arena.live)
		require.Equal(t, held, a.arena.held)
	}
}

// entries returns the key table's entries by key.
func (s *Store) entries() map[string]entry {
	m := make(map[string]entry)
	for id, r := range s.table.recs {
		if id != 0 && !r.val.deleted() {
			m[string(s.table.keyOf(uint32(id)))] = r.val
		}
	}
	return m
}

// TestOverwrittenValuesAreReclaimed: overwriting keys again and again
// leaves the chunks holding at most half again the current values' bytes
// (and a slack of a few chunks), every key still reads its latest value,
// and a value read before its chunk was dropped is unchanged.
func TestOverwrittenValuesAreReclaimed(t *testing.T) {
	s := New()
	rng := rand.New(rand.NewPCG(3, 4))
	const keys = 20_000
	latest := make(map[uint64][]byte)
	wroteAt := make(map[uint64]uint64)
	createdAt := make(map[uint64]uint64)
	writes := make(map[uint64]uint32)
	first, _ := s.Read(keyOf(0))
	require.Nil(t, first.Value)
	var kept, keptCopy []byte
	var keptAt entry
	for slot := uint64(1); slot <= 200_000; slot++ {
		k := rng.Uint64N(keys)
		v := fmt.Appendf(nil, "%d-%d-%s", k, slot, bytes.Repeat([]byte{'x'}, rng.IntN(200)))
		if slot%5000 == 0 {
			v = nil // an empty value has no bytes in any chunk
		}
		s.Apply(slot, &wire.Op{ID: wire.OpID{Session: 1, Seq: slot}, Kind: wire.Put, Key: keyOf(k), Value: v}, slot)
		latest[k] = v
		wroteAt[k] = slot
		if writes[k] == 0 {
			createdAt[k] = slot
		}
		writes[k]++
		if slot == 1000 {
			r, _ := s.Read(keyOf(k))
			kept, keptCopy, keptAt = r.Value, bytes.Clone(r.Value), s.entries()[keyOf(k)]
		}
		require.LessOrEqual(t, s.vals.held, s.vals.live+s.vals.live/2+3*chunkSize, "slot %d", slot)
	}
	checkChunks(t, s)
	require.Less(t, len(s.vals.chunks), 3*s.vals.live/chunkSize+4, "dropped chunks' ids are reused")
	digest := uint64(0)
	for k, v := range latest {
		got, ok := s.Read(keyOf(k))
		require.True(t, ok)
		require.Equal(t, v, got.Value, "key %d", k)
		require.Equal(t, Version{Value: v, Slot: wroteAt[k], Create: createdAt[k], Version: uint64(writes[k])}, got, "key %d", k)
		digest ^= entryHash(keyOf(k), &entry{slot: wroteAt[k], create: createdAt[k], version: writes[k]}, v)
	}
	require.Equal(t, digest, s.Digest())
	now := s.vals.chunks[keptAt.chunk].bytes
	require.False(t, len(now) > int(keptAt.off) && &now[keptAt.off] == &kept[0], "the chunk read at slot 1000 was never dropped")
	require.Equal(t, keptCopy, kept, "a value read before its chunk was dropped changed")

	r, err := Restore(s.Snapshot())
	require.NoError(t, err)
	require.Equal(t, s.Digest(), r.Digest())
	checkChunks(t, r)
}

// TestNoChunkIsDroppedWhileFrozen: while a frozen view is encoded, writes
// that overwrite every key and open new chunks neither move values out
// of the chunks the view reads nor change their bytes; after the thaw the
// chunks are reclaimed as before.
func TestNoChunkIsDroppedWhileFrozen(t *testing.T) {
	s := New()
	value := func(k, round uint64) []byte { return fmt.Appendf(nil, "%0500d", k*1000+round) }
	const keys = 2000
	slot := uint64(0)
	for round := range uint64(3) {
		for k := range uint64(keys) {
			slot++
			s.Apply(slot, &wire.Op{ID: wire.OpID{Session: 1, Seq: slot}, Kind: wire.Put, Key: keyOf(k), Value: value(k, round)}, slot)
		}
	}
	before := s.Digest()
	f := s.Freeze()
	encoded := make(chan []byte)
	go func() { encoded <- f.Encode() }()
	chunks := len(s.vals.chunks) + len(s.vals.free)
	for round := uint64(3); round < 8; round++ {
		for k := range uint64(keys) {
			slot++
			s.Apply(slot, &wire.Op{ID: wire.OpID{Session: 1, Seq: slot}, Kind: wire.Put, Key: keyOf(k), Value: value(k, round)}, slot)
		}
	}
	snap := <-encoded
	require.Greater(t, len(s.vals.chunks)+len(s.vals.free), chunks, "the writes opened new chunks")
	require.True(t, s.vals.wasteful(), "nothing was reclaimed while frozen")
	r, err := Restore(snap)
	require.NoError(t, err)
	require.Equal(t, before, r.Digest())

	s.Thaw()
	slot++
	s.Apply(slot, &wire.Op{ID: wire.OpID{Session: 1, Seq: slot}, Kind: wire.Put, Key: keyOf(0), Value: value(0, 9)}, slot)
	checkChunks(t, s)
	for k := uint64(1); k < keys; k++ {
		v, _ := s.Read(keyOf(k))
		require.Equal(t, value(k, 7), v.Value)
	}
}
