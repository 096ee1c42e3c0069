package stats

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds, in microseconds. Below a microsecond nothing in a
// networked store is meaningful; above a minute an operation has long been
// failed by the client, so both ends are clamped rather than dropped.
const (
	minMicros   = 1
	maxMicros   = 60_000_000
	sigDigits   = 3
	maxRecorded = maxMicros * time.Microsecond
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(minMicros, maxMicros, sigDigits)
}

// toMicros converts a latency to the histogram's unit, clamped to its
// range, and reports whether it had to be clamped from above.
func toMicros(d time.Duration) (us int64, clamped bool) {
	us = d.Microseconds()
	switch {
	case us < minMicros:
		return minMicros, false
	case us > maxMicros:
		return maxMicros, true
	}
	return us, false
}
