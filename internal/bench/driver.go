package bench

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/stats"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/workload"
)

// driver keeps one session's pipeline full. Its callbacks run on the
// client's event loop; the mutex only guards the start, which runs on the
// benchmark's goroutine while early completions may already arrive.
type driver struct {
	mu       sync.Mutex
	session  session
	gen      *workload.Generator
	rec      *stats.Recorder
	pendings int
	limit    int // operations to issue; 0 = until stopped
	issued   int
	inflight int
	writes   uint64
	// written holds the keys this session wrote, for the final read-back.
	written map[string]struct{}
	stopped *atomic.Bool
	outage  *outage
	// faults, when a nemesis runs, is told of every completion; site is
	// the session's client site.
	faults  *faultLog
	site    string
	ops     *atomic.Int64
	drained chan struct{}
	closed  bool
}

func (d *driver) start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.inflight < d.pendings && d.more() {
		d.issue()
	}
	d.maybeDrained()
}

func (d *driver) more() bool {
	return !d.stopped.Load() && (d.limit == 0 || d.issued < d.limit)
}

// issue submits the next operation; d.mu is held.
func (d *driver) issue() {
	kind, level, key := d.gen.Next()
	var value []byte
	if kind.IsWrite() {
		value = d.nextValue()
		if d.written != nil {
			d.written[key] = struct{}{}
		}
	}
	d.issued++
	d.inflight++
	class := stats.ClassOf(level, kind)
	d.session.Submit(kind, key, value, level, func(r client.Result) { d.done(class, r) })
}

// nextValue is the value of the session's next write; d.mu is held. It
// names its write (session, write number), so a read can be traced to the
// write it observed.
func (d *driver) nextValue() []byte {
	d.writes++
	return d.gen.Value(wire.OpID{Session: d.session.ID(), Seq: d.writes})
}

func (d *driver) done(class stats.Class, r client.Result) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight--
	now := time.Now()
	if d.faults != nil {
		d.faults.completed(d.site, class, now.Add(-r.Latency), now, r.Err == nil)
	}
	if r.Err != nil {
		d.rec.RecordFailure(class, now)
	} else {
		if class == stats.StrongWrite {
			d.outage.strongWrite(now.Add(-r.Latency), now)
		}
		d.rec.Record(class, r.Latency, r.Path, now)
		if r.Path == clientcore.PathSlow {
			d.rec.RecordSlowReason(r.Reason, now)
		}
	}
	d.ops.Add(1)
	// A closed client fails a submission before Submit returns, which
	// would call done again under d.mu.
	if d.more() && !errors.Is(r.Err, client.ErrClosed) {
		d.issue()
	}
	d.maybeDrained()
}

func (d *driver) maybeDrained() {
	if d.inflight == 0 && !d.more() && !d.closed {
		d.closed = true
		close(d.drained)
	}
}

// stop ends issuing; the driver drains what is in flight.
func (d *driver) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.maybeDrained()
}
