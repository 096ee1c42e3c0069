package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/stats"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/workload"
)

// preloadTimeout bounds the load phase: it writes every key once, so on
// any working cluster it ends in a small multiple of the key space divided
// by the run's throughput.
const preloadTimeout = 30 * time.Minute

// preloadInFlight is the fewest writes a session keeps in flight while
// preloading. The load phase is not measured, so it need not keep the
// run's own number, which for a closed loop or a few in flight leaves it
// bound by the wide-area round trip: 24 sessions with 4 in flight each
// loaded about 900 keys a second, a million keys in 18 minutes; with 64
// each the replicas' CPU bounds it instead: a million keys in 45 to 75
// seconds on a 2-core machine.
const preloadInFlight = 64

// preload writes every key of the key space once, before the clock of the
// run starts, with strong writes spread over the sessions (session i of n
// writes keys i, i+n, i+2n, ...), each keeping its usual number in flight
// or preloadInFlight, whichever is more.
// The writes are part of the checked history but not of the measurements,
// so the run then measures a store that already holds its whole key space:
// the state, and with it the replicas' memory, no longer grows with the
// keys the run happens to touch.
func (r *run) preload(ctx context.Context) (string, error) {
	ds := r.drivers()
	keys := r.cfg.Bench.KeySpace
	start := time.Now()
	var wg sync.WaitGroup
	var written, failed atomic.Int64
	names := workload.NewKeyNames(r.keyPrefix, keys)
	for i, d := range ds {
		p := &preloader{d: d, next: uint64(i), step: uint64(len(ds)), keys: keys, names: names,
			written: &written, failed: &failed, done: wg.Done}
		wg.Add(1)
		p.start(max(r.cfg.Bench.Pendings, preloadInFlight))
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	stopProgress := r.preloadProgress(start, &written)
	defer stopProgress()
	select {
	case <-finished:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(preloadTimeout):
		return "", fmt.Errorf("bench: preload wrote %d of %d keys in %v", written.Load(), keys, preloadTimeout)
	}
	took := time.Since(start)
	return fmt.Sprintf("preload: wrote each of the %d keys once with a strong write before the run, in %.1f s (%.0f ops/s), %d failed",
		keys, took.Seconds(), float64(keys)/took.Seconds(), failed.Load()), nil
}

func (r *run) preloadProgress(start time.Time, written *atomic.Int64) func() {
	return r.every(5*time.Second, func(now time.Time) {
		fmt.Fprintf(r.opts.Progress, "  preload %5.0fs  %10d of %d keys written\n",
			now.Sub(start).Seconds(), written.Load(), r.cfg.Bench.KeySpace)
	})
}

// preloader writes one session's share of the keys.
type preloader struct {
	d                *driver
	next, step, keys uint64
	names            *workload.KeyNames
	inflight         int
	written, failed  *atomic.Int64
	done             func()
	finished         bool
}

func (p *preloader) start(pendings int) {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	for p.inflight < pendings && p.next < p.keys {
		p.issue()
	}
	p.maybeDone()
}

// issue writes the next key; d.mu is held.
func (p *preloader) issue() {
	key := p.names.Name(p.next)
	p.next += p.step
	p.inflight++
	p.d.session.Submit(wire.Put, key, p.d.nextValue(), wire.Strong, p.completed)
}

func (p *preloader) completed(res client.Result) {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	p.inflight--
	if res.Err != nil {
		p.failed.Add(1)
	} else {
		p.written.Add(1)
	}
	if p.next < p.keys {
		p.issue()
	}
	p.maybeDone()
}

func (p *preloader) maybeDone() {
	if p.inflight == 0 && p.next >= p.keys && !p.finished {
		p.finished = true
		p.done()
	}
}

// restartClock starts the run's clock anew after the preload: the
// recorders and the timelines count from now.
func (r *run) restartClock() time.Time {
	r.start = time.Now()
	for _, bc := range r.clients {
		bc.rec = stats.NewRecorder(r.start)
		for _, d := range bc.drivers {
			d.rec = bc.rec
		}
	}
	return r.start
}
