package stats

import (
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcore"
)

// ClassSummary describes the latencies of a set of completed operations, in
// milliseconds. Percentiles come from the histogram (three significant
// digits); the average and the maximum are exact.
type ClassSummary struct {
	Count  int64   `json:"count"`
	AvgMs  float64 `json:"avg_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
	// CDF samples the distribution at fixed quantiles, for plotting.
	CDF []CDFPoint `json:"cdf,omitempty"`
}

// CDFPoint says that a fraction Q of the operations took at most Ms.
type CDFPoint struct {
	Q  float64 `json:"q"`
	Ms float64 `json:"ms"`
}

// cdfQuantiles are where CDFs are sampled: dense in the tail, where
// protocols differ.
var cdfQuantiles = []float64{0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97, 98, 99, 99.5, 99.9, 99.99, 100}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }

// summarize turns a class's counters into a summary; an empty class gives
// the zero summary.
func (s *classStats) summarize() ClassSummary {
	if s.count == 0 {
		return ClassSummary{}
	}
	maxMs := ms(s.max)
	// A histogram percentile is the top of its bucket, which can lie above
	// the true maximum; no percentile can.
	pct := func(q float64) float64 {
		return min(float64(s.hist.ValueAtQuantile(q))/1e3, maxMs)
	}
	cdf := make([]CDFPoint, len(cdfQuantiles))
	for i, q := range cdfQuantiles {
		cdf[i] = CDFPoint{Q: q / 100, Ms: pct(q)}
	}
	return ClassSummary{
		Count:  s.count,
		AvgMs:  ms(s.sum) / float64(s.count),
		P50Ms:  pct(50),
		P99Ms:  pct(99),
		P999Ms: pct(99.9),
		MaxMs:  maxMs,
		CDF:    cdf,
	}
}

// Summary describes the completed operations of class c in the window.
func (r *Recorder) Summary(c Class) ClassSummary { return r.classes[c].summarize() }

// Total describes all completed operations in the window, of every class.
func (r *Recorder) Total() ClassSummary {
	return r.Combined(func(Class) bool { return true })
}

// Combined describes the completed operations of every class that in
// selects, as one distribution.
func (r *Recorder) Combined(in func(Class) bool) ClassSummary {
	var all classStats
	for c := range r.classes {
		if in(Class(c)) {
			all.merge(&r.classes[c])
		}
	}
	return all.summarize()
}

// Ops is the number of operations completed in the window.
func (r *Recorder) Ops() int64 {
	var n int64
	for c := range r.classes {
		n += r.classes[c].count
	}
	return n
}

// Failed is the number of operations that failed in the window.
func (r *Recorder) Failed() int64 {
	var n int64
	for c := range r.classes {
		n += r.classes[c].failed
	}
	return n
}

// Excluded is the number of operations, completed or failed, that ended
// outside the window.
func (r *Recorder) Excluded() int64 { return r.excluded }

// PerSecond returns the completions during each second after the start,
// inside the window or not.
func (r *Recorder) PerSecond() []int64 { return append([]int64(nil), r.timeline...) }

// PathCount is the number of operations of class c in the window that
// completed by path p.
func (r *Recorder) PathCount(c Class, p clientcore.Path) int64 {
	if int(p) >= numPaths {
		return 0
	}
	return r.classes[c].paths[p]
}

// PathLatency is the summed latency of the operations of class c in the
// window that completed by path p.
func (r *Recorder) PathLatency(c Class, p clientcore.Path) time.Duration {
	if int(p) >= numPaths {
		return 0
	}
	return r.classes[c].pathSums[p]
}

// FastPathRatio is the share of strong operations that completed on the
// fast path, among those that took the fast or the slow path. ok is false
// when there were none, so callers never divide by zero.
func (r *Recorder) FastPathRatio() (ratio float64, ok bool) {
	var fast, slow int64
	for _, c := range classes {
		if c.IsStrong() {
			fast += r.PathCount(c, clientcore.PathFast) + r.PathCount(c, clientcore.PathCommitted)
			slow += r.PathCount(c, clientcore.PathSlow)
		}
	}
	if fast+slow == 0 {
		return 0, false
	}
	return float64(fast) / float64(fast+slow), true
}

// Throughput is the operations completed per second of the window.
func (r *Recorder) Throughput() float64 {
	secs := r.windowSeconds()
	if secs <= 0 {
		return 0
	}
	return float64(r.Ops()) / secs
}
