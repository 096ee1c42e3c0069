package kvstore

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// benchKeys is the key space of a preloaded benchmark run.
const benchKeys = 1_000_000

// keyOf names the store's keys in the tests: "user" and a number, as the
// benchmark's workload names them.
func keyOf(n uint64) string { return "user" + strconv.FormatUint(n, 10) }

// preloaded returns a store holding benchKeys keys of 100-byte values, each
// written by its own operation as a preload writes them.
func preloaded() *Store {
	s := New()
	for k := range uint64(benchKeys) {
		value := make([]byte, 100)
		value[0] = byte(k)
		s.Apply(k+1, &wire.Op{ID: wire.OpID{Session: k%24 + 1, Seq: k/24 + 1}, Kind: wire.Put, Key: keyOf(k), Value: value}, k/24)
	}
	return s
}

// measureCPU starts counting the process's CPU time, its collector's
// included; the function it returns reports it per operation as
// cpu-ns/op. On a machine shared with other work, ns/op also counts the
// time the benchmark waited for a core, which CPU time leaves out.
func measureCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if used := cpuTime() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(used/time.Nanosecond)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkCollectWithStore measures a full garbage collection of a heap
// that holds a million-key store: the marking every replica's collector
// repeats, every second or two under load, for as long as the store lives.
func BenchmarkCollectWithStore(b *testing.B) {
	s := preloaded()
	runtime.GC()
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
	}
	runtime.KeepAlive(s)
}

// BenchmarkApplyToStore applies a benchmark run's mix to a million-key
// store: one operation in ten a write of a fresh 100-byte value, the rest
// reads, on uniformly random keys.
func BenchmarkApplyToStore(b *testing.B) {
	s := preloaded()
	rng := rand.New(rand.NewPCG(1, 2))
	slot, seq := uint64(benchKeys), uint64(benchKeys)
	keys := make([]string, benchKeys)
	for k := range keys {
		keys[k] = keyOf(uint64(k))
	}
	b.ResetTimer()
	defer measureCPU(b)()
	for b.Loop() {
		slot++
		seq++
		op := wire.Op{ID: wire.OpID{Session: seq%24 + 1, Seq: seq/24 + 1}, Kind: wire.Get, Key: keyOf(rng.Uint64N(benchKeys))}
		if seq%10 == 0 {
			op.Kind, op.Value = wire.Put, make([]byte, 100)
		}
		s.Apply(slot, &op, seq/24)
	}
}

// benchKeyNames returns the preloaded store's keys, named once so that a
// benchmark's loop does not format them.
func benchKeyNames() []string {
	keys := make([]string, benchKeys)
	for k := range keys {
		keys[k] = keyOf(uint64(k))
	}
	return keys
}

// BenchmarkPutToStore applies writes alone to a million-key store: a
// 100-byte value over a uniformly random key's, through the session
// table as every write goes.
func BenchmarkPutToStore(b *testing.B) {
	s := preloaded()
	keys := benchKeyNames()
	rng := rand.New(rand.NewPCG(1, 2))
	value := make([]byte, 100)
	slot, seq := uint64(benchKeys), uint64(benchKeys)
	b.ResetTimer()
	defer measureCPU(b)()
	for b.Loop() {
		slot++
		seq++
		value[0] = byte(seq)
		op := wire.Op{ID: wire.OpID{Session: seq%24 + 1, Seq: seq/24 + 1}, Kind: wire.Put, Key: keys[rng.Uint64N(benchKeys)], Value: value}
		s.Apply(slot, &op, seq/24)
	}
}

// BenchmarkGetFromStore applies reads alone to a million-key store, of
// uniformly random keys, through the session table as every operation
// that reaches the log goes.
func BenchmarkGetFromStore(b *testing.B) {
	s := preloaded()
	keys := benchKeyNames()
	rng := rand.New(rand.NewPCG(1, 2))
	slot, seq := uint64(benchKeys), uint64(benchKeys)
	b.ResetTimer()
	defer measureCPU(b)()
	for b.Loop() {
		slot++
		seq++
		op := wire.Op{ID: wire.OpID{Session: seq%24 + 1, Seq: seq/24 + 1}, Kind: wire.Get, Key: keys[rng.Uint64N(benchKeys)]}
		s.Apply(slot, &op, seq/24)
	}
}
