package kvstore

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func putKey(slot uint64, key, v string) *wire.Op {
	return &wire.Op{ID: wire.OpID{Session: 1, Seq: slot}, Kind: wire.Put, Key: key, Value: []byte(v)}
}

func delKey(slot uint64, key string) *wire.Op {
	return &wire.Op{ID: wire.OpID{Session: 1, Seq: slot}, Kind: wire.Delete, Key: key}
}

// rangeKeys collects what Range hands out.
func rangeKeys(s *Store, start, end string, limit int) []string {
	var keys []string
	n := s.Range(start, end, limit, func(k string, v Version) bool {
		keys = append(keys, k+"="+string(v.Value))
		return true
	})
	if n != len(keys) {
		panic(fmt.Sprintf("Range returned %d for %d keys", n, len(keys)))
	}
	return keys
}

// TestRangeIsOrdered: Range walks keys in byte order, the empty key and
// bytes above 0x7f included, within [start, end), a single key for an
// empty end, to the last key for NoEnd, and stops at the limit or when
// told to.
func TestRangeIsOrdered(t *testing.T) {
	s := New()
	keys := []string{"b", "a", "", "ab", "\x00", "\xff", "a\x00", "c"}
	for i, k := range keys {
		s.Apply(uint64(i+1), putKey(uint64(i+1), k, "v"+k), 0)
	}
	require.Equal(t, len(keys), s.Len())
	all := []string{"=v", "\x00=v\x00", "a=va", "a\x00=va\x00", "ab=vab", "b=vb", "c=vc", "\xff=v\xff"}
	require.Equal(t, all, rangeKeys(s, "", NoEnd, 0))
	require.Equal(t, all[2:5], rangeKeys(s, "a", "b", 0))
	require.Equal(t, all[2:4], rangeKeys(s, "a", "b", 2))
	require.Equal(t, []string{"ab=vab"}, rangeKeys(s, "ab", "", 0), "an empty end is the start key alone")
	require.Empty(t, rangeKeys(s, "abc", "", 0))
	require.Empty(t, rangeKeys(s, "b", "a", 0), "an end before the start is empty")
	require.Empty(t, rangeKeys(s, "b", "b", 0))
	require.Equal(t, all[6:], rangeKeys(s, "c", NoEnd, 0))
	n := s.Range("", NoEnd, 0, func(k string, _ Version) bool { return k != "a" })
	require.Equal(t, 3, n, "fn's false stops the walk after the key it was handed")
}

// TestRangeMatchesAMap: random puts and deletes, some while frozen; Range
// agrees with a plain map sorted, and Len with its size.
func TestRangeMatchesAMap(t *testing.T) {
	s := New()
	want := make(map[string]string)
	rng := rand.New(rand.NewPCG(5, 6))
	var f *Frozen
	for slot := uint64(1); slot <= 5000; slot++ {
		// Short keys, and keys longer than the 16 bytes the table and the
		// index compare before the bytes, sharing those 16 or not.
		prefix := []string{"k", "a shared prefix longer than 16 bytes ", "\x00\xffbinary and 16+ bytes", "sixteen byte key"}[rng.IntN(4)]
		k := fmt.Sprintf("%s%03d", prefix, rng.IntN(300))[:len(prefix)+rng.IntN(4)]
		if rng.IntN(3) == 0 {
			s.Apply(slot, delKey(slot, k), 0)
			delete(want, k)
		} else {
			v := fmt.Sprint(slot)
			s.Apply(slot, putKey(slot, k, v), 0)
			want[k] = v
		}
		switch slot % 1000 {
		case 100:
			f = s.Freeze()
		case 600:
			f.Encode()
			s.Thaw()
		}
		if slot%250 == 0 {
			var exp []string
			for _, k := range slices.Sorted(maps.Keys(want)) {
				exp = append(exp, k+"="+want[k])
			}
			require.Equal(t, exp, rangeKeys(s, "", NoEnd, 0), "slot %d", slot)
			require.Equal(t, len(want), s.Len())
		}
	}
}

// TestDelete: a delete removes the key and its value from the digest, is
// a no-op on a missing key, and is kept in the session table like a put.
func TestDelete(t *testing.T) {
	s, fresh := New(), New()
	s.Apply(1, putKey(1, "a", "x"), 0)
	s.Apply(2, putKey(2, "b", "y"), 0)
	fresh.Apply(2, putKey(2, "b", "y"), 0)
	res, dup := s.Apply(3, delKey(3, "a"), 0)
	require.False(t, dup)
	require.Equal(t, Result{Slot: 3}, res)
	_, ok := s.Read("a")
	require.False(t, ok)
	require.Equal(t, 1, s.Len())
	require.Equal(t, fresh.Digest(), s.Digest(), "a deleted key leaves no trace in the digest")
	s.Apply(4, delKey(4, "never"), 0)
	require.Equal(t, fresh.Digest(), s.Digest())

	s.Apply(5, putKey(5, "a", "z"), 0)
	_, dup = s.Apply(6, delKey(3, "a"), 0)
	require.True(t, dup, "a retried delete is not applied again")
	v, ok := s.Read("a")
	require.True(t, ok)
	require.Equal(t, "z", string(v.Value))
	checkChunks(t, s)
}

// TestDeleteWhileFrozen: a frozen view keeps a key deleted after the
// freeze, reads do not see it, and the thaw removes it from the map; a key
// created and deleted while frozen leaves nothing behind.
func TestDeleteWhileFrozen(t *testing.T) {
	s := New()
	s.Apply(1, putKey(1, "a", "x"), 0)
	s.Apply(2, putKey(2, "b", "y"), 0)
	before := s.Digest()
	f := s.Freeze()
	s.Apply(3, delKey(3, "a"), 0)
	s.Apply(4, putKey(4, "c", "z"), 0)
	s.Apply(5, delKey(5, "c"), 0)
	s.Apply(6, putKey(6, "b", "w"), 0)
	s.Apply(7, delKey(7, "b"), 0)
	s.Apply(8, putKey(8, "b", "again"), 0)
	for _, k := range []string{"a", "c"} {
		_, ok := s.Read(k)
		require.False(t, ok, k)
	}
	require.Equal(t, []string{"b=again"}, rangeKeys(s, "", NoEnd, 0))
	require.Equal(t, []wire.KeyValue{kv("b", "again", 8, 8, 1)}, versions(s), "b was created again")
	snap := f.Encode()
	s.Thaw()
	require.Nil(t, s.overlay)
	require.Len(t, s.entries(), 1)
	require.Equal(t, 1, s.Len())
	checkChunks(t, s)

	r, err := Restore(snap)
	require.NoError(t, err)
	require.Equal(t, before, r.Digest(), "the view holds the keys as they were at the freeze")
	require.Equal(t, []string{"a=x", "b=y"}, rangeKeys(r, "", NoEnd, 0))
	again, err := Restore(s.Snapshot())
	require.NoError(t, err)
	require.Equal(t, s.Digest(), again.Digest())
	require.Equal(t, []string{"b=again"}, rangeKeys(again, "", NoEnd, 0))
	require.Equal(t, []wire.KeyValue{kv("b", "again", 8, 8, 1)}, versions(again))
}

// TestSnapshotKeepsByteKeys: empty, binary and long keys, and deletes,
// survive a snapshot with the session table; the size bound still holds.
func TestSnapshotKeepsByteKeys(t *testing.T) {
	s := New()
	keys := []string{"", "\x00", "\x00\x00\x01", "\xff\xfe", strings.Repeat("k", 10_000), "user42"}
	for i, k := range keys {
		s.Apply(uint64(i+1), putKey(uint64(i+1), k, fmt.Sprint(i)), 0)
	}
	s.Apply(10, delKey(10, "user42"), 0)
	s.Apply(11, delKey(11, "\x00"), 0)
	f := s.Freeze()
	snap := f.Encode()
	require.LessOrEqual(t, len(snap), f.size())
	s.Thaw()
	r, err := Restore(snap)
	require.NoError(t, err)
	require.Equal(t, s.Digest(), r.Digest())
	require.Equal(t, rangeKeys(s, "", NoEnd, 0), rangeKeys(r, "", NoEnd, 0))
	require.Equal(t, 4, r.Len())
	_, dup := r.Apply(12, delKey(10, "user42"), 0)
	require.True(t, dup, "the delete's session entry survives the snapshot")
	for i := range snap {
		_, err := Restore(snap[:i])
		require.Error(t, err, "prefix %d", i)
	}
}

// TestDigestCoversKeys: the same values at the same slots under other keys
// give another digest, the boundary between key and value included.
func TestDigestCoversKeys(t *testing.T) {
	a, b, c := New(), New(), New()
	a.Apply(1, putKey(1, "ab", "c"), 0)
	b.Apply(1, putKey(1, "a", "bc"), 0)
	c.Apply(1, putKey(1, "ac", "c"), 0)
	require.NotEqual(t, a.Digest(), b.Digest())
	require.NotEqual(t, a.Digest(), c.Digest())
}
