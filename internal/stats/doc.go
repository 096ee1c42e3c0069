// Package stats records what a benchmark run measured and turns it into the
// report `hybridkv bench` prints and saves.
//
// A [Recorder] belongs to one session or worker goroutine and is not safe
// for concurrent use, so recording costs no locking; recorders are merged
// per client and then across clients when the run ends. Latencies go into
// HDR histograms (1 µs to 60 s at three significant digits) so that tail
// percentiles stay accurate at any load without keeping every sample, one
// histogram per operation class: strong and weak, reads, writes and scans
// behave so differently that a single distribution would hide them. A recorder also
// counts how each strong operation completed (fast or slow path), failed
// operations, and completions per second over the whole run, so a run that
// slows down over time shows up as such rather than as a lower average.
//
// Only operations that end inside a measured window count towards the
// results; warm-up and cool-down are excluded (and counted separately), as
// they measure connection set-up and draining rather than steady state.
//
// The package also reads CPU time: of this process, of its reaped children,
// and of any live process through /proc, so a report can state CPU cost per
// operation for every replica and client.
package stats
