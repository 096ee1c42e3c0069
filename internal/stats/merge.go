package stats

import (
	"math"
	"time"
)

// Merge adds everything o recorded to r, leaving o unchanged and r's
// window as it is; recorders merged together should share one window.
// Timelines are aligned on their start times, rounded to whole seconds,
// so recorders of processes started at slightly different moments still
// line up.
func (r *Recorder) Merge(o *Recorder) {
	for c := range r.classes {
		r.classes[c].merge(&o.classes[c])
	}
	r.excluded += o.excluded
	for i := range r.slow {
		r.slow[i] += o.slow[i]
	}
	r.clamped += o.clamped
	if o.last.After(r.last) {
		r.last = o.last
	}
	shift := int(math.Round(o.start.Sub(r.start).Seconds()))
	for i, n := range o.timeline {
		if n != 0 {
			r.addTimeline(i+shift, n)
		}
	}
}

func (s *classStats) merge(o *classStats) {
	if o.hist != nil {
		if s.hist == nil {
			s.hist = newHistogram()
		}
		s.hist.Merge(o.hist) // same range on both sides: nothing is dropped
	}
	s.count += o.count
	s.sum += o.sum
	s.max = max(s.max, o.max)
	s.failed += o.failed
	for p, n := range o.paths {
		s.paths[p] += n
		s.pathSums[p] += o.pathSums[p]
	}
}

// windowSeconds is the length of the measured window. An open start is the
// recorder's start; an open end is the last measured operation.
func (r *Recorder) windowSeconds() float64 {
	from, to := r.windowBounds()
	return max(to.Sub(from).Seconds(), 0)
}

func (r *Recorder) windowBounds() (from, to time.Time) {
	from, to = r.winStart, r.winEnd
	if from.IsZero() {
		from = r.start
	}
	if to.IsZero() {
		to = r.last
	}
	return from, to
}
