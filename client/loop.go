package client

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/round"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// call is one operation between submission and completion.
type call struct {
	session uint64
	op      wire.Op
	start   time.Time
	done    func(Result)
	id      wire.OpID // set by the loop when the core accepts it
	// invoke is the history's clock at submission.
	invoke int64
	// finished is set by the loop once the call is answered or dropped.
	finished bool
}

// loop owns the client core: it alone touches the core and the call table,
// so the core stays single-threaded while callers submit from anywhere.
type loop struct {
	core  clientcore.Core
	cfg   Config
	inbox *round.Inbox

	mu      sync.Mutex
	submits []*call
	cancels []*call
	quit    bool

	calls map[wire.OpID]*call
	// byStart holds the calls in the order they were submitted, finished
	// ones too until they come up (see expire).
	byStart []*call
	// leader mirrors the core's belief, for readers off the loop.
	leader atomic.Uint64
}

func newLoop(core clientcore.Core, cfg Config) *loop {
	return &loop{core: core, cfg: cfg, inbox: round.NewInbox(), calls: make(map[wire.OpID]*call)}
}

func (l *loop) submit(c *call) error {
	l.mu.Lock()
	if l.quit {
		l.mu.Unlock()
		return ErrClosed
	}
	l.submits = append(l.submits, c)
	l.mu.Unlock()
	l.inbox.Notify()
	return nil
}

func (l *loop) cancel(c *call) {
	l.mu.Lock()
	l.cancels = append(l.cancels, c)
	l.mu.Unlock()
	l.inbox.Notify()
}

func (l *loop) stop() {
	l.mu.Lock()
	l.quit = true
	l.mu.Unlock()
	l.inbox.Notify()
}

// run drives the core until stopped, handing what it sends to send.
func (l *loop) run(send func([]wire.Envelope)) {
	ticker := time.NewTicker(l.cfg.Tick)
	defer ticker.Stop()
	var submits, cancels []*call
	for {
		var now time.Time
		ticked := false
		select {
		case <-l.inbox.Wake():
		case now = <-ticker.C:
			ticked = true
		}
		// A tick due goes into this round whatever woke it: under a
		// flood of replies the inbox always is, and the operations' re-send
		// and expiry timers would fall behind.
		if !ticked {
			now, ticked = round.TickDue(ticker.C)
		}
		if ticked {
			l.core.Tick()
			l.expire(now)
		}
		// Every sender is a replica: the round takes all that waits.
		round.Take(l.inbox, round.Unlimited, nil, l.core.Step)
		l.mu.Lock()
		submits, l.submits = l.submits, submits[:0]
		cancels, l.cancels = l.cancels, cancels[:0]
		quit := l.quit
		l.mu.Unlock()
		for _, c := range submits {
			if h := l.cfg.History; h != nil {
				c.invoke = h.Now()
			}
			c.id = l.core.Submit(c.session, c.op)
			l.calls[c.id] = c
			l.byStart = append(l.byStart, c)
		}
		for _, c := range cancels {
			l.drop(c, nil)
		}
		clear(submits)
		clear(cancels)
		out, done := l.core.Ready()
		send(out)
		for _, d := range done {
			l.complete(d)
		}
		l.core.Advance()
		l.leader.Store(uint64(l.core.Leader()))
		if quit {
			l.failAll()
			return
		}
	}
}

func (l *loop) complete(d clientcore.Completion) {
	c := l.calls[d.ID]
	if c == nil {
		return
	}
	delete(l.calls, d.ID)
	c.finished = true
	l.record(c, &d)
	c.done(Result{Found: d.Found, Value: d.Value, Revision: d.Revision, Slot: d.Slot, Path: d.Path, Reason: d.Reason,
		Latency: time.Since(c.start)})
}

// drop abandons a call: the core stops retrying it; whether it took effect
// stays unknown. err is reported to the caller unless nil.
func (l *loop) drop(c *call, err error) {
	if c.finished {
		return
	}
	c.finished = true
	delete(l.calls, c.id)
	l.core.Cancel(c.id)
	l.record(c, nil)
	if err != nil {
		c.done(Result{Err: err, Latency: time.Since(c.start)})
	}
}

// expire times out the calls unanswered for longer than the timeout. Every
// call has the same timeout, so they expire in the order they were
// submitted: a tick looks at the oldest ones only, not at every call in
// flight (with thousands in flight, a walk of them all every tick was a
// few per cent of the client's CPU). Finished calls leave byStart when
// they come up, or when they outnumber the calls in flight.
func (l *loop) expire(now time.Time) {
	for len(l.byStart) > 0 {
		c := l.byStart[0]
		if !c.finished && now.Sub(c.start) <= l.cfg.Timeout {
			break
		}
		l.drop(c, ErrTimeout) // nothing for a finished call
		l.byStart[0] = nil
		l.byStart = l.byStart[1:]
	}
	if len(l.byStart) > 2*len(l.calls)+1024 {
		l.byStart = slices.DeleteFunc(l.byStart, func(c *call) bool { return c.finished })
	}
}

// failAll ends every call at Close. Submissions queued with the quit flag
// were already taken in this iteration; later ones are refused by submit.
func (l *loop) failAll() {
	for _, c := range l.calls {
		l.drop(c, ErrClosed)
	}
}

// record adds a finished call to the history: with its result, or (done
// nil) as abandoned, which may or may not have taken effect.
func (l *loop) record(c *call, done *clientcore.Completion) {
	h := l.cfg.History
	if h == nil {
		return
	}
	e := history.Event{Session: c.id.Session, Seq: c.id.Seq, Level: c.op.Level, Kind: c.op.Kind,
		Key: c.op.Key, Invoke: c.invoke, Outcome: history.Unknown}
	if c.op.Kind == wire.Put || c.op.Kind.HasProgram() {
		// A put's value, a transaction's or a scan's program; a delete
		// writes no value: it makes the key absent.
		e.Value = c.op.Value
	}
	if done != nil {
		e.Return, e.Outcome, e.Slot = h.Now(), history.OK, done.FinalSlot()
		switch {
		case c.op.Kind.HasProgram():
			e.Result = done.Value
		case !c.op.Kind.IsWrite():
			e.Found, e.Value = done.Found, done.Value
		}
	}
	h.Append(e)
}
