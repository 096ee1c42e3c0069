package node

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/round"
	"github.com/hybridkv/hybridkv/internal/transport"
)

// roundBudget ends a round once it has spent this long stepping clients'
// messages (see round.Limits): only between rounds does the loop take a
// tick and send what the core has to say.
const roundBudget = 5 * time.Millisecond

// Config describes one replica process's loop.
type Config struct {
	Core      protocol.Replica
	Transport transport.Config
	// Tick is the wall-clock length of one core tick.
	Tick time.Duration
	// BatchDelay is how long the first client request of a batch may wait
	// for others before the batch is proposed; 0 proposes at once.
	BatchDelay time.Duration
	// SyncDelay is how long the writer waits before its next write when
	// rounds queued up during the last one; 0 writes at once.
	SyncDelay time.Duration
}

// Node runs a replica core.
type Node struct {
	cfg    Config
	tr     *transport.Transport
	status atomic.Pointer[protocol.Status]
	// metricsReq carries requests for the core's metrics to the loop,
	// which answers between steps; done is closed when Run returns.
	metricsReq chan chan protocol.Metrics
	done       chan struct{}
	// loop is the core's round; its Writes hold the rounds whose writes
	// the writer has not done yet.
	loop *protocol.Loop
	// writeWake tells the writer a round was queued.
	writeWake chan struct{}
	// budget ends a round's stepping of clients' messages (roundBudget).
	budget time.Duration
}

// New opens the replica's transport (it listens at once, so peers and
// clients can connect while the caller gets ready to Run).
func New(cfg Config) (*Node, error) {
	r := newNode(cfg)
	tr, err := transport.New(cfg.Transport, r.loop.Inbox.Put)
	if err != nil {
		return nil, err
	}
	r.tr = tr
	r.loop.Send = tr.SendAll
	return r, nil
}

// newNode returns a node without its transport.
func newNode(cfg Config) *Node {
	r := &Node{cfg: cfg,
		metricsReq: make(chan chan protocol.Metrics), done: make(chan struct{}),
		writeWake: make(chan struct{}, 1), budget: roundBudget,
		loop: &protocol.Loop{Core: cfg.Core, Inbox: round.NewInbox(), Limits: round.Deployed,
			BatchDelay: cfg.BatchDelay, Self: cfg.Transport.Self}}
	st := cfg.Core.Status()
	r.status.Store(&st)
	return r
}

// Transport returns the replica's transport (for its address and stats).
func (r *Node) Transport() *transport.Transport { return r.tr }

// Status returns the core's status as of the last loop iteration; safe for
// concurrent use.
func (r *Node) Status() protocol.Status { return *r.status.Load() }

// ErrNotRunning is returned by Metrics once Run has returned.
var ErrNotRunning = errors.New("node: replica not running")

// Metrics asks the loop for the core's metrics and waits for the answer, at
// most until ctx ends: the loop answers between two rounds of work, so a
// loop stuck in one round shows as a timeout. Safe for concurrent use.
func (r *Node) Metrics(ctx context.Context) (protocol.Metrics, error) {
	reply := make(chan protocol.Metrics, 1)
	select {
	case r.metricsReq <- reply:
	case <-r.done:
		return protocol.Metrics{}, ErrNotRunning
	case <-ctx.Done():
		return protocol.Metrics{}, ctx.Err()
	}
	// The loop sends on the buffered reply right after taking the request.
	return <-reply, nil
}

// InboxLen counts the messages received and not yet handed to the core.
func (r *Node) InboxLen() int { return r.loop.Inbox.Len() }

// WritesWaiting counts the core's rounds whose disk writes are not done
// yet, the one being written included; safe for concurrent use. It stays
// near one while the disk keeps up.
func (r *Node) WritesWaiting() int { return r.loop.Writes.Len() }

// Run drives the core until ctx ends, then closes the transport. The
// core's disk writes are done by a writer goroutine, so the loop goes on
// stepping while a sync takes its milliseconds; Run returns once the
// writer has stopped.
func (r *Node) Run(ctx context.Context) error {
	defer close(r.done)
	defer r.tr.Close()
	writerDone := make(chan struct{})
	defer func() { <-writerDone }()
	go r.writer(ctx, writerDone)
	ticker := time.NewTicker(r.cfg.Tick)
	defer ticker.Stop()
	batch := time.NewTimer(time.Hour)
	batch.Stop()
	for {
		var ev protocol.Event
		select {
		case <-ctx.Done():
			return nil
		case <-r.loop.Inbox.Wake():
		case <-ticker.C:
			ev.Ticks = 1
		case <-batch.C:
			ev.BatchDue = true
		case reply := <-r.metricsReq:
			reply <- r.loop.Core.Metrics()
			continue
		}
		// A tick due goes into this round whatever woke it (once, with
		// the tick left to select's draw, 512 client requests were
		// stepped between two ticks).
		if ev.Ticks == 0 {
			if _, due := round.TickDue(ticker.C); due {
				ev.Ticks = 1
			}
		}
		if r.round(ev) {
			batch.Reset(r.cfg.BatchDelay)
		}
	}
}

// round runs one round of the core, within its budget, and wakes the
// writer if writes wait; arm starts the batch timer.
func (r *Node) round(ev protocol.Event) (arm bool) {
	start := time.Now()
	arm, writing := r.loop.Round(ev, func() bool { return time.Since(start) >= r.budget })
	if writing {
		select {
		case r.writeWake <- struct{}{}:
		default:
		}
	}
	st := r.loop.Core.Status()
	r.status.Store(&st)
	return arm
}

// writer does the queued rounds' writes, all that wait in one go (one
// sync), and then delivers what waited for them.
//
// Rounds that queued up while a write was being done show a busy disk;
// the writer then waits SyncDelay before the next write, so that more
// rounds share its sync. A sync's kernel work is CPU the replicas
// share: with three replicas on two cores, CURP-HT at --delay 0
// --threads 8 --pendings 20 synced a fifth less often and gave 1.05x the
// throughput at 500 µs (six rounds, five won;
// docs/results/2026-11-24-fsync-cost.md). An idle writer, whose last
// write had no company, writes at once, so a lone operation pays nothing.
func (r *Node) writer(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	var wait *time.Timer
	for {
		b, ok := r.loop.Writes.Take()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-r.writeWake:
			}
			continue
		}
		r.write(b)
		if r.cfg.SyncDelay > 0 && b.Write != nil && r.loop.Writes.Len() > 0 {
			if wait == nil {
				wait = time.NewTimer(r.cfg.SyncDelay)
			} else {
				wait.Reset(r.cfg.SyncDelay)
			}
			select {
			case <-ctx.Done():
				wait.Stop()
				return
			case <-wait.C:
			}
		}
	}
}

// write does a batch's write and delivers what waited for it.
func (r *Node) write(b protocol.Batch) {
	if b.Write != nil {
		if err := b.Write.Do(); err != nil {
			// A disk that cannot write leaves no safe way on: nothing
			// that waited for the write may be sent.
			panic(fmt.Sprintf("replica %d: disk write: %v", r.cfg.Transport.Self, err))
		}
	}
	r.loop.Written(b)
}
