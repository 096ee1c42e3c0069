package disk

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram is a duration distribution in cumulative buckets, the shape in
// which monitoring systems take histograms.
type Histogram struct {
	Count uint64
	// Sum is exact; the buckets carry the histogram's three significant
	// digits.
	Sum time.Duration
	// Buckets[i] counts the durations at most bounds[i] (the bounds
	// Timings was given).
	Buckets []uint64
}

// Timings are the disk's durations since it was opened.
type Timings struct {
	// Syncs covers the saves that synced the log (see Save).
	Syncs Histogram
	// Snapshots covers snapshot saves: the file and its log marker.
	Snapshots Histogram
	// SnapshotBytes counts the bytes of snapshot data saved.
	SnapshotBytes uint64
}

// Timings reports the sync and snapshot durations over bounds, which must
// be ascending; safe for concurrent use.
func (d *Disk) Timings(bounds []time.Duration) Timings {
	d.mu.Lock()
	defer d.mu.Unlock()
	return Timings{
		Syncs:         cumulative(d.syncTimes, d.syncTotal, bounds),
		Snapshots:     cumulative(d.snapTimes, d.snapTotal, bounds),
		SnapshotBytes: d.snapBytes,
	}
}

func cumulative(h *hdrhistogram.Histogram, sum time.Duration, bounds []time.Duration) Histogram {
	out := Histogram{Count: uint64(h.TotalCount()), Sum: sum, Buckets: make([]uint64, len(bounds))}
	if out.Count == 0 {
		return out
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		// A bar holds values in [From, To]; it counts towards every
		// bucket its upper end fits in.
		for i, b := range bounds {
			if bar.To <= int64(b) {
				out.Buckets[i] += uint64(bar.Count)
			}
		}
	}
	return out
}
