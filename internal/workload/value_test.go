package workload

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestValueRoundTrip(t *testing.T) {
	ids := []wire.OpID{
		{},
		{Session: 1, Seq: 1},
		{Session: 0xdeadbeef, Seq: 12345},
		{Session: math.MaxUint64, Seq: math.MaxUint64},
	}
	for _, size := range []int{MinValueSize, MinValueSize + 1, 100, 4096} {
		c := DefaultConfig()
		c.ValueSize = size
		g, err := NewGenerator(c, 1)
		require.NoError(t, err)
		seen := make(map[string]bool)
		for _, id := range ids {
			v := g.Value(id)
			require.Len(t, v, size)
			got, ok := DecodeValue(v)
			require.True(t, ok, "size %d id %v", size, id)
			require.Equal(t, id, got)
			require.False(t, seen[string(v)], "values of distinct operations differ")
			seen[string(v)] = true
		}
	}
}

func TestValueLayout(t *testing.T) {
	c := DefaultConfig()
	c.ValueSize = 20
	g, err := NewGenerator(c, 1)
	require.NoError(t, err)
	v := g.Value(wire.OpID{Session: 0x0102, Seq: 3})
	require.Equal(t, []byte{2, 1, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 'q', 'r', 's', 't'}, v)
}

func TestValueIsFreshAndOneAllocation(t *testing.T) {
	g, err := NewGenerator(DefaultConfig(), 1)
	require.NoError(t, err)
	a := g.Value(wire.OpID{Session: 1, Seq: 1})
	b := g.Value(wire.OpID{Session: 1, Seq: 2})
	a[20] = 0
	id, ok := DecodeValue(b)
	require.True(t, ok, "values do not share memory")
	require.Equal(t, uint64(2), id.Seq)
	allocs := testing.AllocsPerRun(100, func() { g.Value(wire.OpID{Session: 1, Seq: 3}) })
	require.Equal(t, 1.0, allocs)
}

func TestDecodeValueRejects(t *testing.T) {
	g, err := NewGenerator(DefaultConfig(), 1)
	require.NoError(t, err)
	corrupt := g.Value(wire.OpID{Session: 1, Seq: 1})
	corrupt[50] ^= 1
	for name, v := range map[string][]byte{
		"nil":            nil,
		"short":          make([]byte, MinValueSize-1),
		"corrupt filler": corrupt,
		"foreign value":  []byte("a value someone else wrote into the store"),
	} {
		_, ok := DecodeValue(v)
		require.False(t, ok, name)
	}
}

func BenchmarkValue(b *testing.B) {
	g, err := NewGenerator(DefaultConfig(), 1)
	require.NoError(b, err)
	var seq uint64
	for b.Loop() {
		seq++
		_ = g.Value(wire.OpID{Session: 1, Seq: seq})
	}
}
