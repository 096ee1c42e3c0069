package bench

import (
	"errors"
	"fmt"
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
	op := d.gen.Next()
	d.issued++
	d.inflight++
	if op.ReadModifyWrite {
		d.submit(wire.Get, op.Key, nil, op.Level, func(class stats.Class, r client.Result) {
			d.readThenWrite(class, r, op.Key, op.Level)
		})
		return
	}
	d.submit(op.Kind, op.Key, d.valueOf(op), op.Level, d.done)
}

// submit sends one operation and hands its result to then; d.mu is held.
func (d *driver) submit(kind wire.OpKind, key string, value []byte, level wire.Level, then func(stats.Class, client.Result)) {
	class := stats.ClassOf(level, kind)
	d.session.Submit(kind, key, value, level, func(r client.Result) { then(class, r) })
}

// valueOf is the value op sends: a write's fresh one, a scan's range, none
// for a read; d.mu is held.
func (d *driver) valueOf(op workload.Op) []byte {
	switch {
	case op.Kind == client.ScanKind:
		return scanValue(op)
	case op.Kind.IsWrite():
		return d.writeValue(op.Key)
	}
	return nil
}

// writeValue is the value of the session's next write, of key, which it
// notes for the final read-back; d.mu is held.
func (d *driver) writeValue(key string) []byte {
	if d.written != nil {
		d.written[key] = struct{}{}
	}
	return d.nextValue()
}

// scanValue encodes a scan's range read as the client takes it. The
// generator's ranges always encode (a range read of the scan's own first
// key), so a failure is a bug: it panics rather than fail the operation
// from inside Submit, under d.mu.
func scanValue(op workload.Op) []byte {
	v, err := client.EncodeScan(client.TxnOp{Key: op.Key, End: op.End, Limit: op.Limit})
	if err != nil {
		panic(fmt.Sprintf("bench: the workload drew a scan the client refuses: %v", err))
	}
	return v
}

// nextValue is the value of the session's next write; d.mu is held. It
// names its write (session, write number), so a read can be traced to the
// write it observed.
func (d *driver) nextValue() []byte {
	d.writes++
	return d.gen.Value(wire.OpID{Session: d.session.ID(), Seq: d.writes})
}

// done ends an operation: it records the result and keeps the pipeline
// full.
func (d *driver) done(class stats.Class, r client.Result) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record(class, r)
	d.next(r)
}

// readThenWrite continues a read-modify-write once its read is answered:
// the read is recorded as a read, and the write of the same key follows
// at the same level. A failed read ends the operation.
func (d *driver) readThenWrite(class stats.Class, r client.Result, key string, level wire.Level) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record(class, r)
	if r.Err != nil {
		d.next(r)
		return
	}
	d.submit(wire.Put, key, d.writeValue(key), level, d.done)
}

// record records one completion; d.mu is held.
func (d *driver) record(class stats.Class, r client.Result) {
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
}

// next issues the operation that replaces one that ended with r; d.mu is
// held.
func (d *driver) next(r client.Result) {
	d.inflight--
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
