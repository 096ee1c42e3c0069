package workload

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestKeyNames: names are the prefix and the number zero-padded to the key
// space's width, sort as the numbers do, and are the same from the table
// as formatted one by one.
func TestKeyNames(t *testing.T) {
	k := NewKeyNames("", 1000)
	require.Equal(t, "user000", k.Name(0))
	require.Equal(t, "user042", k.Name(42))
	require.Equal(t, "user999", k.Name(999))
	require.Equal(t, "user0", NewKeyNames("", 1).Name(0))
	require.Equal(t, "user1000", k.Name(1000), "past the space: formatted, wider")
	require.Same(t, k, NewKeyNames("", 1000), "one table per key space")
	require.Same(t, k, NewKeyNames(KeyPrefix, 1000), "the default prefix is the package's")
	other := NewKeyNames("r1-user", 1000)
	require.Equal(t, "r1-user042", other.Name(42))
	require.Equal(t, "r1-user1000", other.Name(1000))

	names := make([]string, 1000)
	for i := range names {
		names[i] = k.Name(uint64(i))
	}
	require.True(t, slices.IsSorted(names))
	untabled := newKeyNames(KeyPrefix, 1000)
	untabled.table = ""
	for i, n := range names {
		require.Equal(t, n, untabled.Name(uint64(i)))
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = k.Name(7) }), "a tabled name allocates nothing")

	huge := newKeyNames(KeyPrefix, 1<<40)
	require.Empty(t, huge.table, "no table for a space too large")
	require.Equal(t, "user0000000012345", huge.Name(12345))
}

// TestRangeEnd: a range's End is the name of the key after its last, or,
// where that would lie past the key space (whose names widen and sort
// among the space's own), just after the last key's name.
func TestRangeEnd(t *testing.T) {
	k := NewKeyNames("", 1000)
	for _, tt := range []struct {
		first, length uint64
		want          string
	}{
		{0, 1, "user001"},
		{10, 5, "user015"},
		{994, 5, "user999"},
		{995, 5, "user999\x00"},  // would end at key 1000, "user1000" < "user995"
		{990, 20, "user999\x00"}, // the ten keys left
		{999, 100, "user999\x00"},
		{0, 1000, "user999\x00"},
		{1005, 3, "user1005\x00"}, // past the space: its first key alone
		{7, 0, "user007"},         // nothing
	} {
		end := k.RangeEnd(tt.first, tt.length)
		require.Equal(t, tt.want, end, "first %d, length %d", tt.first, tt.length)
		r := wire.TxnOp{Key: k.Name(tt.first), End: end}
		require.True(t, tt.length == 0 || r.Covers(r.Key), "a range holds its first key")
	}
	require.Less(t, k.Name(1000), k.Name(995), "why: the name of key 1000 would end a range before it starts")
	odd := NewKeyNames("", 500) // names past the space keep its width
	require.Equal(t, "user499\x00", odd.RangeEnd(495, 10))
	require.Equal(t, "user010", odd.RangeEnd(5, 5))
}

// TestNextNamesTheDrawnKey: Next returns the name of the key next draws.
func TestNextNamesTheDrawnKey(t *testing.T) {
	c := DefaultConfig()
	a, err := NewGenerator(c, 5)
	require.NoError(t, err)
	b, err := NewGenerator(c, 5)
	require.NoError(t, err)
	names := NewKeyNames("", c.KeySpace)
	for range 1000 {
		op := a.Next()
		d := b.next()
		require.Equal(t, d.kind, op.Kind)
		require.Equal(t, d.level, op.Level)
		require.Equal(t, names.Name(d.key), op.Key)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { a.Next() }))
}
