package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

var bench = genConfig{ops: 100_000, sessions: 32, pipeline: 8, writeShare: 0.2, weakShare: 0.5,
	hotKeys: 20, keys: 20_000, hotShare: 0.3, seed: 1}

func TestGeneratedHistoryIsClean(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 operations")
	}
	events := generate(bench)
	require.Len(t, events, bench.ops)
	start := time.Now()
	r := Check(&history.File{Events: events}, Options{})
	t.Logf("%d ops, %d sessions: checked in %v %v", len(events), bench.sessions, time.Since(start), r.Checked)
	require.NoError(t, r.Err)
	assert.True(t, r.Clean(), "%v", r.Violations)
	assert.Equal(t, bench.ops, r.Checked["X1"])
}

// The seeds' largest runs: 3 clients × 128 sessions pipelining 15 ops,
// one key taking 5% of the load.
func TestSeedsShapedHistoryIsClean(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 operations")
	}
	c := genConfig{ops: 100_000, sessions: 384, pipeline: 15, writeShare: 0.1, weakShare: 0.5,
		hotKeys: 1, keys: 1_000_000, hotShare: 0.05, seed: 2}
	events := generate(c)
	start := time.Now()
	r := Check(&history.File{Events: events}, Options{})
	t.Logf("%d ops, %d sessions: checked in %v", len(events), c.sessions, time.Since(start))
	require.NoError(t, r.Err)
	assert.True(t, r.Clean(), "%v", r.Violations)
}

// BenchmarkCheckWeakHeavy checks the shape of a weak-heavy CURP-HO run:
// 96 sessions pipelining 15 operations, 95 % weak, weak puts without
// slots, 30 % of operations on 20 hot keys that every session writes.
func BenchmarkCheckWeakHeavy(b *testing.B) {
	c := genConfig{ops: 1_000_000, sessions: 96, pipeline: 15, writeShare: 0.05, weakShare: 0.95,
		hotKeys: 20, keys: 1_000_000, hotShare: 0.3, seed: 3}
	events := generate(c)
	for i := range events {
		if events[i].Level == wire.Weak && events[i].Kind == wire.Put {
			events[i].Slot = 0
		}
	}
	b.ResetTimer()
	for range b.N {
		if r := Check(&history.File{Events: events}, Options{}); !r.Clean() {
			b.Fatal(r.Violations)
		}
	}
}

// Without slots (as for CURP-HO's weak writes) the causal checks fall back
// to causal order between writes.
func TestGeneratedHistoryWithoutSlotsIsClean(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 operations")
	}
	events := generate(bench)
	for i := range events {
		events[i].Slot = 0
	}
	start := time.Now()
	r := Check(&history.File{Events: events}, Options{})
	t.Logf("%d ops without slots: checked in %v", len(events), time.Since(start))
	require.NoError(t, r.Err)
	assert.True(t, r.Clean(), "%v", r.Violations)
}

// A single corrupted read in a large history is found.
func TestGeneratedHistoryMutations(t *testing.T) {
	cfg := bench
	cfg.ops = 20_000
	base := generate(cfg)
	// before reports whether a completed before b started.
	before := func(a, b *history.Event) bool { return a.Return < b.Invoke }
	for _, tc := range []struct {
		name   string
		mutate func(events []history.Event) bool
		want   string
	}{
		{"strong read returns a value overwritten before it started", func(ev []history.Event) bool {
			for i := range ev {
				r := &ev[i]
				if r.Kind != wire.Get || r.Level != wire.Strong {
					continue
				}
				for j := range ev {
					w2 := &ev[j]
					if w2.Kind != wire.Put || w2.Level != wire.Strong || w2.Key != r.Key || !before(w2, r) {
						continue
					}
					for k := range ev {
						if o := &ev[k]; o.Kind == wire.Put && o.Level == wire.Strong && o.Key == r.Key && before(o, w2) {
							r.Value, r.Found = o.Value, true
							return true
						}
					}
				}
			}
			return false
		}, "S1"},
		{"weak read misses its session's earlier put", func(ev []history.Event) bool {
			for i := range ev {
				r := &ev[i]
				if r.Kind != wire.Get || r.Level != wire.Weak {
					continue
				}
				for j := range ev {
					if w := &ev[j]; w.Kind == wire.Put && w.Session == r.Session && w.Key == r.Key && before(w, r) {
						r.Value, r.Found = nil, false
						return true
					}
				}
			}
			return false
		}, "W1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append([]history.Event(nil), base...)
			require.True(t, tc.mutate(events), "no candidate")
			res := Check(&history.File{Events: events}, Options{})
			require.NoError(t, res.Err)
			for _, v := range res.Violations {
				t.Log(v)
			}
			assert.Contains(t, properties(res), tc.want)
		})
	}
}

// TestGeneratedTxnHistoryIsClean: 20,000 operations, a tenth of them
// transactions over 220 keys, check clean. Their range reads and deletes
// make them about five single-key operations each on average.
func TestGeneratedTxnHistoryIsClean(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 operations")
	}
	c := genConfig{ops: 20_000, sessions: 32, pipeline: 8, writeShare: 0.2, weakShare: 0.5,
		hotKeys: 20, keys: 200, hotShare: 0.3, deleteShare: 0.05, txnShare: 0.1, seed: 4}
	events := generate(c)
	start := time.Now()
	r := Check(&history.File{Events: events}, Options{})
	t.Logf("%d ops: checked in %v %v", len(events), time.Since(start), r.Checked)
	require.NoError(t, r.Err)
	assert.True(t, r.Clean(), "%v", r.Violations)
}
