package rafthtclient

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCacheKeepsTheFresherValue(t *testing.T) {
	c := newCache()
	c.learn("k", cached{found: true, value: []byte("new"), asOf: 9})
	c.learn("k", cached{found: true, value: []byte("old"), asOf: 5})
	v, ok := c.lookup("k")
	require.True(t, ok)
	require.Equal(t, "new", string(v.value))
	c.learn("k", cached{asOf: 12}) // a delete, later
	v, _ = c.lookup("k")
	require.False(t, v.found)
}

// TestCachePrunesWhatTheReplicaReflects: pruning drops the entries a state
// reflects and remembers how far it dropped, so an older state is not
// trusted afterwards.
func TestCachePrunesWhatTheReplicaReflects(t *testing.T) {
	c := newCache()
	for i := range minPrune {
		c.learn(fmt.Sprint(i), cached{found: true, asOf: uint64(i + 1)})
	}
	require.True(t, c.covers(0))
	c.prune(minPrune / 2)
	require.Len(t, c.keys, minPrune/2)
	require.False(t, c.covers(minPrune/2-1))
	require.True(t, c.covers(minPrune/2))
	_, ok := c.lookup(fmt.Sprint(minPrune - 1))
	require.True(t, ok, "entries newer than the state are kept")
	// Below the doubled size nothing is scanned.
	c.learn("x", cached{asOf: 1000})
	c.prune(2000)
	require.Len(t, c.keys, minPrune/2+1)
}

func TestCacheBarrier(t *testing.T) {
	c := newCache()
	c.barrier(40)
	require.False(t, c.covers(39))
	require.True(t, c.covers(40))
}
