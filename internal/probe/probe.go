package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Config sets a probe's work.
type Config struct {
	// Interval is how often a Sample is written; a stretch in which no
	// batch finished writes none.
	Interval time.Duration
	// Words is the size of the load buffer in 4-byte words; zero means
	// DefaultWords.
	Words int
	// LowestPriority runs the probe's thread at the lowest scheduling
	// priority, so it yields the CPU to anything else that wants it.
	LowestPriority bool
	// BatchesPerInterval is how many batches of each kind of work the
	// probe does per interval, spread evenly and sleeping in between;
	// zero means DefaultBatches.
	BatchesPerInterval int
}

// DefaultBatches keeps the probe at a few percent of one core: 60,000
// loads and 600,000 steps a second. The lowest priority alone does not
// keep a probe small: a machine is seldom busy every instant, and a probe
// that ran whenever a core was idle for a moment took 44 % of one core
// beside a saturating benchmark, whose throughput fell by a quarter as
// the probe pulled its 128 MB through the caches the replicas share.
const DefaultBatches = 3

// DefaultWords makes a 128 MB buffer: several times the last-level cache of
// any current server processor, so nearly every load misses it.
const DefaultWords = 32 << 20

// Batch sizes: a batch of each kind takes a few milliseconds on an idle
// core, short enough that a probe at the lowest priority still finishes
// some in every second of a saturated machine.
const (
	loadsPerBatch = 20_000
	stepsPerBatch = 200_000
)

// Sample is what the probe measured over one stretch of time: how many
// loads and arithmetic steps it finished and how much of its thread's CPU
// time each kind took.
type Sample struct {
	// Seconds is when the stretch ended, after the probe started.
	Seconds  float64
	Loads    int64
	LoadCPU  time.Duration
	Steps    int64
	StepsCPU time.Duration
}

// String is the sample's line in the probe's output.
func (s Sample) String() string {
	return fmt.Sprintf("probe %.3f %d %d %d %d", s.Seconds, s.Loads, s.LoadCPU.Nanoseconds(), s.Steps, s.StepsCPU.Nanoseconds())
}

// Parse reads a line written by Run.
func Parse(line string) (Sample, error) {
	f := strings.Fields(line)
	if len(f) != 6 || f[0] != "probe" {
		return Sample{}, fmt.Errorf("not a probe line: %q", line)
	}
	secs, err := strconv.ParseFloat(f[1], 64)
	if err != nil {
		return Sample{}, fmt.Errorf("probe line %q: %w", line, err)
	}
	var n [4]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(f[2+i], 10, 64); err != nil || n[i] < 0 {
			return Sample{}, fmt.Errorf("probe line %q: field %d is not a count", line, i+2)
		}
	}
	return Sample{Seconds: secs, Loads: n[0], LoadCPU: time.Duration(n[1]), Steps: n[2], StepsCPU: time.Duration(n[3])}, nil
}

// Speeds sums samples: nanoseconds of CPU time per dependent load and per
// arithmetic step, each zero when the samples hold none.
func Speeds(samples []Sample) (nsPerLoad, nsPerStep float64) {
	var s Sample
	for _, x := range samples {
		s.Loads += x.Loads
		s.LoadCPU += x.LoadCPU
		s.Steps += x.Steps
		s.StepsCPU += x.StepsCPU
	}
	if s.Loads > 0 {
		nsPerLoad = float64(s.LoadCPU.Nanoseconds()) / float64(s.Loads)
	}
	if s.Steps > 0 {
		nsPerStep = float64(s.StepsCPU.Nanoseconds()) / float64(s.Steps)
	}
	return nsPerLoad, nsPerStep
}

// Run measures until ctx is done, writing a Sample line to w every
// interval; it returns nil when ctx ends it.
func Run(ctx context.Context, cfg Config, w io.Writer) error {
	if cfg.Interval <= 0 {
		return errors.New("probe: the interval must be positive")
	}
	if cfg.Words == 0 {
		cfg.Words = DefaultWords
	}
	if cfg.BatchesPerInterval <= 0 {
		cfg.BatchesPerInterval = DefaultBatches
	}
	gap := cfg.Interval / time.Duration(cfg.BatchesPerInterval)
	// The thread's CPU clock must be this goroutine's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cfg.LowestPriority {
		if err := lowerThreadPriority(); err != nil {
			return fmt.Errorf("probe: %w", err)
		}
	}
	if _, err := threadCPU(); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	next := cycle(cfg.Words, rand.New(rand.NewPCG(1, 2)))
	start := time.Now()
	due := start.Add(cfg.Interval)
	nextBatch := start
	var s Sample
	var at uint32
	x := uint64(1)
	for ctx.Err() == nil {
		if wait := time.Until(nextBatch); wait > 0 {
			select {
			case <-ctx.Done():
				continue
			case <-time.After(wait):
			}
		}
		nextBatch = later(nextBatch.Add(gap), time.Now())
		t0, _ := threadCPU()
		at = walk(next, at, loadsPerBatch)
		t1, _ := threadCPU()
		x = mix(x, stepsPerBatch)
		t2, _ := threadCPU()
		s.Loads, s.LoadCPU = s.Loads+loadsPerBatch, s.LoadCPU+t1-t0
		s.Steps, s.StepsCPU = s.Steps+stepsPerBatch, s.StepsCPU+t2-t1
		if now := time.Now(); !now.Before(due) {
			s.Seconds = now.Sub(start).Seconds()
			if _, err := fmt.Fprintln(w, s.String()); err != nil {
				return err
			}
			s = Sample{}
			for !due.After(now) {
				due = due.Add(cfg.Interval)
			}
		}
	}
	// The work's results are used, so the compiler cannot drop the work.
	runtime.KeepAlive(at)
	runtime.KeepAlive(x)
	return nil
}

// later is the later of a and b: a probe that fell behind its schedule
// (it got no CPU for a while) does not hurry to catch up.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// cycle returns a random cyclic permutation of n positions (Sattolo's
// algorithm): following next from any position visits every other one
// before it returns, so no load can be predicted or served from a short
// loop in the cache.
func cycle(n int, r *rand.Rand) []uint32 {
	next := make([]uint32, n)
	for i := range next {
		next[i] = uint32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		next[i], next[j] = next[j], next[i]
	}
	return next
}

// walk follows the cycle for n loads, each depending on the last.
func walk(next []uint32, at uint32, n int) uint32 {
	for range n {
		at = next[at]
	}
	return at
}

// mix does n steps of register-only arithmetic (a linear congruential step
// and a shift-xor), each depending on the last.
func mix(x uint64, n int) uint64 {
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}
