package stats

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/hybridkv/hybridkv/internal/clientcore"
)

// numPaths sizes the per-path counters: index 0 counts completions whose
// path was not reported or unknown.
const numPaths = int(clientcore.PathLog) + 1

// maxTimeline bounds the per-second timeline, so that a bogus completion
// time cannot make it allocate gigabytes; completions later than this after
// the start still count, they just do not appear in the timeline.
const maxTimeline = 24 * 60 * 60

// classStats is what a recorder keeps for one class of operations.
type classStats struct {
	// hist is allocated on first use: a histogram of this range is about
	// 140 KB, and many sessions never issue some classes.
	hist  *hdrhistogram.Histogram
	count int64
	// sum and max are exact, unlike the histogram, so the average and the
	// maximum in a report are not rounded to a histogram bucket.
	sum    time.Duration
	max    time.Duration
	failed int64
	paths  [numPaths]int64
	// pathSums adds up the latencies of each path's completions, so a
	// report can tell what each path costs.
	pathSums [numPaths]time.Duration
}

// Recorder accumulates the results of one session or worker. It is not
// safe for concurrent use.
type Recorder struct {
	start time.Time
	// The measured window [winStart, winEnd); a zero bound is open.
	winStart, winEnd time.Time
	classes          [numClasses]classStats
	// excluded counts operations, completed or failed, outside the window.
	excluded int64
	// clamped counts latencies above the histogram's range.
	clamped int64
	// slow counts, by reason, the strong operations that took the slow
	// path inside the window.
	slow [clientcore.NumReasons]int64
	// timeline[i] counts completions during second i after start, window
	// or not, so warm-up and cool-down are visible.
	timeline []int64
	// last is the latest time an operation ended inside the window; it
	// closes an open-ended window.
	last time.Time
}

// NewRecorder returns a recorder whose per-second timeline starts at start.
// Until SetWindow is called every operation is measured.
func NewRecorder(start time.Time) *Recorder {
	return &Recorder{start: start}
}

// SetWindow restricts measurement to operations ending in [start, end),
// and of those that completed, to the ones that started in it (Record).
// A zero start or end leaves that side open: a run bounded by a number of
// operations rather than a duration only knows where its window starts.
func (r *Recorder) SetWindow(start, end time.Time) {
	r.winStart, r.winEnd = start, end
}

// inWindow reports whether an operation ending at t is measured.
func (r *Recorder) inWindow(t time.Time) bool {
	if !r.winStart.IsZero() && t.Before(r.winStart) {
		return false
	}
	return r.winEnd.IsZero() || t.Before(r.winEnd)
}

// Record notes an operation of class c that completed at time at after
// latency, by path. It is measured only if it started in the window too:
// an operation issued during the warm-up may have waited for what the
// warm-up is there to leave out (connections, the first leader), and
// ending just inside a short window it counted as the run's tail (a
// strong p99 of a second in every run with a one-second warm-up).
func (r *Recorder) Record(c Class, latency time.Duration, path clientcore.Path, at time.Time) {
	r.tick(at)
	if !r.inWindow(at) || !r.winStart.IsZero() && at.Add(-latency).Before(r.winStart) {
		r.excluded++
		return
	}
	r.noteLast(at)
	if r.classes[c].add(latency, path) {
		r.clamped++
	}
}

// RecordFailure notes an operation of class c that failed (timed out or
// returned an error) at time at. Failures have no meaningful latency.
func (r *Recorder) RecordFailure(c Class, at time.Time) {
	if !r.inWindow(at) {
		r.excluded++
		return
	}
	r.noteLast(at)
	r.classes[c].failed++
}

func (r *Recorder) noteLast(at time.Time) {
	if at.After(r.last) {
		r.last = at
	}
}

// tick counts a completion in the timeline.
func (r *Recorder) tick(at time.Time) {
	d := at.Sub(r.start)
	if d < 0 {
		return
	}
	r.addTimeline(int(d/time.Second), 1)
}

func (r *Recorder) addTimeline(sec int, n int64) {
	if sec < 0 || sec >= maxTimeline {
		return
	}
	if sec >= len(r.timeline) {
		r.timeline = append(r.timeline, make([]int64, sec+1-len(r.timeline))...)
	}
	r.timeline[sec] += n
}

// add records one completion and reports whether its latency was clamped.
func (s *classStats) add(latency time.Duration, path clientcore.Path) (clamped bool) {
	if s.hist == nil {
		s.hist = newHistogram()
	}
	latency = max(latency, 0)
	us, clamped := toMicros(latency)
	_ = s.hist.RecordValue(us) // in range by construction
	s.count++
	s.sum += latency
	s.max = max(s.max, latency)
	if int(path) >= numPaths {
		path = 0
	}
	s.paths[path]++
	s.pathSums[path] += latency
	return clamped
}

// RecordSlowReason notes why an operation recorded at the same time took the
// slow path.
func (r *Recorder) RecordSlowReason(reason clientcore.SlowReason, at time.Time) {
	if int(reason) < len(r.slow) && r.inWindow(at) {
		r.slow[reason]++
	}
}

// SlowReasons counts the window's slow-path operations by reason.
func (r *Recorder) SlowReasons() map[string]int64 {
	m := make(map[string]int64)
	for reason, n := range r.slow {
		if n > 0 {
			m[clientcore.SlowReason(reason).String()] = n
		}
	}
	return m
}
