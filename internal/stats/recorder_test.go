package stats

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestPercentiles(t *testing.T) {
	tests := []struct {
		name      string
		latencies func() []time.Duration
		want      ClassSummary
		eps       float64 // relative tolerance on every field
	}{
		{
			name: "1..1000 ms uniform",
			latencies: func() []time.Duration {
				var l []time.Duration
				for i := 1; i <= 1000; i++ {
					l = append(l, time.Duration(i)*time.Millisecond)
				}
				return l
			},
			want: ClassSummary{Count: 1000, AvgMs: 500.5, P50Ms: 500, P99Ms: 990, P999Ms: 999, MaxMs: 1000},
			eps:  0.002,
		},
		{
			name: "constant 5 ms",
			latencies: func() []time.Duration {
				l := make([]time.Duration, 100)
				for i := range l {
					l[i] = 5 * time.Millisecond
				}
				return l
			},
			want: ClassSummary{Count: 100, AvgMs: 5, P50Ms: 5, P99Ms: 5, P999Ms: 5, MaxMs: 5},
			eps:  0.001,
		},
		{
			name: "bimodal: 90% at 1 ms, 10% at 100 ms",
			latencies: func() []time.Duration {
				var l []time.Duration
				for i := range 1000 {
					if i%10 == 0 {
						l = append(l, 100*time.Millisecond)
					} else {
						l = append(l, time.Millisecond)
					}
				}
				return l
			},
			want: ClassSummary{Count: 1000, AvgMs: 10.9, P50Ms: 1, P99Ms: 100, P999Ms: 100, MaxMs: 100},
			eps:  0.001,
		},
		{
			name: "sub-microsecond latencies count as 1 µs in percentiles",
			latencies: func() []time.Duration {
				return []time.Duration{100 * time.Nanosecond, 100 * time.Nanosecond}
			},
			// The exact maximum caps the percentiles.
			want: ClassSummary{Count: 2, AvgMs: 0.0001, P50Ms: 0.0001, P99Ms: 0.0001, P999Ms: 0.0001, MaxMs: 0.0001},
			eps:  0.001,
		},
		{
			name: "beyond 60 s is clamped in percentiles, exact in max",
			latencies: func() []time.Duration {
				return []time.Duration{90 * time.Second}
			},
			want: ClassSummary{Count: 1, AvgMs: 90_000, P50Ms: 60_000, P99Ms: 60_000, P999Ms: 60_000, MaxMs: 90_000},
			eps:  0.001,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder(t0)
			for _, l := range tt.latencies() {
				r.Record(StrongRead, l, clientcore.PathSlow, t0)
			}
			got := r.Summary(StrongRead)
			require.Equal(t, tt.want.Count, got.Count)
			require.InEpsilon(t, tt.want.AvgMs, got.AvgMs, tt.eps, "avg")
			require.InEpsilon(t, tt.want.P50Ms, got.P50Ms, tt.eps, "p50")
			require.InEpsilon(t, tt.want.P99Ms, got.P99Ms, tt.eps, "p99")
			require.InEpsilon(t, tt.want.P999Ms, got.P999Ms, tt.eps, "p99.9")
			require.InEpsilon(t, tt.want.MaxMs, got.MaxMs, tt.eps, "max")
			require.Equal(t, got, r.Total(), "one class: the total is that class")
			require.Equal(t, ClassSummary{}, r.Summary(WeakRead))
		})
	}
}

// recordRandom feeds n random operations spread over the first ten seconds
// after t0 to the recorder that pick chooses.
func recordRandom(seed uint64, n int, pick func(i int) *Recorder) {
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range n {
		c := classes[rng.IntN(len(classes))]
		at := t0.Add(time.Duration(rng.Int64N(int64(10 * time.Second))))
		if rng.IntN(50) == 0 {
			pick(i).RecordFailure(c, at)
			continue
		}
		path := clientcore.PathWeak
		if c.IsStrong() {
			path = clientcore.Path(1 + rng.IntN(2))
		}
		latency := time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond))
		pick(i).Record(c, latency, path, at)
	}
}

func requireSameRecorder(t *testing.T, want, got *Recorder) {
	t.Helper()
	for _, c := range classes {
		require.Equal(t, want.Summary(c), got.Summary(c), c.String())
		for p := range numPaths {
			require.Equal(t, want.PathCount(c, clientcore.Path(p)), got.PathCount(c, clientcore.Path(p)))
		}
	}
	require.Equal(t, want.Total(), got.Total())
	require.Equal(t, want.Ops(), got.Ops())
	require.Equal(t, want.Failed(), got.Failed())
	require.Equal(t, want.Excluded(), got.Excluded())
	require.Equal(t, want.PerSecond(), got.PerSecond())
	require.Equal(t, want.Throughput(), got.Throughput())
	wr, wok := want.FastPathRatio()
	gr, gok := got.FastPathRatio()
	require.Equal(t, wok, gok)
	require.Equal(t, wr, gr)
}

func TestMergeEqualsRecordingInOne(t *testing.T) {
	for _, windowed := range []bool{false, true} {
		newRec := func() *Recorder {
			r := NewRecorder(t0)
			if windowed {
				r.SetWindow(t0.Add(2*time.Second), t0.Add(8*time.Second))
			}
			return r
		}
		one := newRec()
		recordRandom(1, 20_000, func(int) *Recorder { return one })
		parts := []*Recorder{newRec(), newRec(), newRec()}
		recordRandom(1, 20_000, func(i int) *Recorder { return parts[i%3] })
		merged := newRec()
		for _, p := range parts {
			merged.Merge(p)
		}
		requireSameRecorder(t, one, merged)
		require.Positive(t, merged.Failed())
		require.Equal(t, windowed, merged.Excluded() > 0)
	}
}

func TestMergeAlignsTimelines(t *testing.T) {
	a := NewRecorder(t0)
	b := NewRecorder(t0.Add(2 * time.Second)) // a process started later
	a.Record(WeakRead, time.Millisecond, clientcore.PathWeak, t0.Add(2500*time.Millisecond))
	b.Record(WeakRead, time.Millisecond, clientcore.PathWeak, t0.Add(2600*time.Millisecond))
	b.Record(WeakRead, time.Millisecond, clientcore.PathWeak, t0.Add(4100*time.Millisecond))
	a.Merge(b)
	require.Equal(t, []int64{0, 0, 2, 0, 1}, a.PerSecond())
}

func TestWindow(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name                  string
		start, end            time.Time
		ops, failed, excluded int64
		windowSeconds         float64
	}{
		// Operations end at 0.5, 1, 2.9 and 3 s, 10 ms after they
		// started; failures at 0.2 and 2 s. The one that ends at 1 s
		// started before a window from 1 s: it is not measured.
		{"no window", time.Time{}, time.Time{}, 4, 2, 0, 3},
		{"closed window", sec(1), sec(3), 1, 1, 4, 2},
		{"open end", sec(1), time.Time{}, 2, 1, 3, 2},
		{"open start", time.Time{}, sec(1), 1, 1, 4, 1},
		{"window after everything", sec(10), sec(20), 0, 0, 6, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder(t0)
			r.SetWindow(tt.start, tt.end)
			for _, s := range []float64{0.5, 1, 2.9, 3} {
				r.Record(StrongWrite, 10*time.Millisecond, clientcore.PathFast, sec(s))
			}
			r.RecordFailure(StrongWrite, sec(0.2))
			r.RecordFailure(WeakWrite, sec(2))
			require.Equal(t, tt.ops, r.Ops())
			require.Equal(t, tt.ops, r.Summary(StrongWrite).Count)
			require.Equal(t, tt.failed, r.Failed())
			require.Equal(t, tt.excluded, r.Excluded())
			require.InDelta(t, tt.windowSeconds, r.windowSeconds(), 1e-9)
			// The timeline shows every completion, measured or not.
			require.Equal(t, []int64{1, 1, 1, 1}, r.PerSecond())
		})
	}
}

// TestWindowMeasuresOperationsStartedInIt: an operation that waited
// through the warm-up and ended in the window is left out, however long
// it took; one that started in the window is measured.
func TestWindowMeasuresOperationsStartedInIt(t *testing.T) {
	r := NewRecorder(t0)
	r.SetWindow(t0.Add(time.Second), t0.Add(4*time.Second))
	r.Record(StrongWrite, 1050*time.Millisecond, clientcore.PathSlow, t0.Add(1100*time.Millisecond))
	r.Record(StrongWrite, 50*time.Millisecond, clientcore.PathFast, t0.Add(1100*time.Millisecond))
	require.EqualValues(t, 1, r.Ops())
	require.EqualValues(t, 1, r.Excluded())
	require.InDelta(t, 50.0, r.Summary(StrongWrite).MaxMs, 1e-9)
	require.Equal(t, []int64{0, 2}, r.PerSecond(), "the timeline shows both")
}

func TestPerSecond(t *testing.T) {
	r := NewRecorder(t0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	r.Record(WeakRead, time.Millisecond, clientcore.PathWeak, at(-time.Second)) // before the start: not in the timeline
	r.Record(WeakRead, time.Millisecond, clientcore.PathWeak, at(0))
	r.Record(WeakRead, time.Millisecond, clientcore.PathWeak, at(999*time.Millisecond))
	r.Record(WeakRead, time.Millisecond, clientcore.PathWeak, at(time.Second))
	r.Record(WeakRead, time.Millisecond, clientcore.PathWeak, at(3500*time.Millisecond))
	r.RecordFailure(WeakRead, at(2*time.Second)) // failures are not completions
	r.Record(WeakRead, time.Millisecond, clientcore.PathWeak, at(48*time.Hour))
	require.Equal(t, []int64{2, 1, 0, 1}, r.PerSecond())
	require.Equal(t, int64(6), r.Ops())
}

func TestFastPathRatio(t *testing.T) {
	r := NewRecorder(t0)
	_, ok := r.FastPathRatio()
	require.False(t, ok)
	r.Record(WeakWrite, time.Millisecond, clientcore.PathWeak, t0)
	_, ok = r.FastPathRatio()
	require.False(t, ok, "weak operations do not define the ratio")
	for range 3 {
		r.Record(StrongWrite, time.Millisecond, clientcore.PathFast, t0)
	}
	r.Record(StrongRead, time.Millisecond, clientcore.PathSlow, t0)
	r.Record(StrongRead, time.Millisecond, 0, t0) // path not reported
	ratio, ok := r.FastPathRatio()
	require.True(t, ok)
	require.Equal(t, 0.75, ratio)
}

func TestThroughput(t *testing.T) {
	r := NewRecorder(t0)
	require.Zero(t, r.Throughput())
	r.SetWindow(t0, t0.Add(4*time.Second))
	for i := range 100 {
		r.Record(WeakRead, time.Millisecond, clientcore.PathWeak, t0.Add(time.Millisecond+time.Duration(i)*10*time.Millisecond))
	}
	require.Equal(t, 25.0, r.Throughput())
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder(t0)
	at := t0
	for b.Loop() {
		at = at.Add(time.Microsecond)
		r.Record(StrongWrite, 51*time.Millisecond, clientcore.PathFast, at)
	}
}
