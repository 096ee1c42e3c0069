package checker

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
)

// A ten-minute run records tens of millions of events, and indexing them
// was the check's peak of memory: a map entry per identity to find
// duplicates, and the ops grown by doubling. What index allocates per
// event, beyond the op it makes of it, must stay small.
func TestIndexAllocatesLittleBeyondItsOps(t *testing.T) {
	c := genConfig{ops: 200_000, sessions: 96, pipeline: 15, writeShare: 0.05, weakShare: 0.95,
		hotKeys: 20, keys: 1_000_000, hotShare: 0.3, seed: 3}
	f := &history.File{Events: generate(c)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h, err := index(f, newReporter(100, guarantees.All), false)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	perEvent := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(f.Events))
	t.Logf("index allocated %.1f bytes per event", perEvent)
	require.Len(t, h.ops, len(f.Events))
	require.Less(t, perEvent, 200.0, "an op is %d bytes", unsafe.Sizeof(op{}))
}

// The causal sweep walks every op's invocation and return in time order.
// It kept a (time, op, kind) event per invocation and per return, 32
// bytes an op beside everything else it holds per op, and at tens of
// millions of ops that was the check's peak of memory after indexing.
func TestCausalSweepAllocatesLittlePerOp(t *testing.T) {
	c := genConfig{ops: 200_000, sessions: 96, pipeline: 15, writeShare: 0.05, weakShare: 0.95,
		hotKeys: 20, keys: 1_000_000, hotShare: 0.3, seed: 3}
	f := &history.File{Events: generate(c)}
	rep := newReporter(100, guarantees.All)
	h, err := index(f, rep, false)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	checkCausal(h, rep, false)
	runtime.ReadMemStats(&after)
	require.Empty(t, rep.violations)
	perOp := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(h.ops))
	t.Logf("the sweep allocated %.1f bytes per op", perOp)
	require.Less(t, perOp, 105.0)
}
