package curpclient

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/quorum"
	"github.com/hybridkv/hybridkv/internal/sessions"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Config builds a client core.
type Config struct {
	ID       wire.NodeID
	Replicas []wire.NodeID
	// RetryTicks re-sends an operation unanswered for this many ticks.
	RetryTicks int
	// Extension adds a hybrid protocol's weak path; nil is plain CURP,
	// which sends weak operations down the strong path.
	Extension Extension
}

// Extension is what a hybrid protocol adds to the CURP client.
type Extension interface {
	// Prepare completes every new request before it is sent.
	Prepare(c *Client, p *Pending)
	// SubmitWeak sends a weak operation, new or (with FlagRetry) unanswered
	// for a retry period, and may complete it at once.
	SubmitWeak(c *Client, p *Pending)
	// WeakReply handles a reply to a weak operation, and any reply to an
	// operation no longer pending (p is nil then).
	WeakReply(c *Client, from wire.NodeID, p *Pending, rep *wire.Reply)
	// AcceptFastPath vets a strong operation whose oks reached a
	// superquorum (p.Spec and p.Oks hold the replies that form it): it
	// returns ReasonNone to accept, or why the fast path fails.
	AcceptFastPath(c *Client, p *Pending) clientcore.SlowReason
	// Completed sees every completion before the caller does.
	Completed(c *Client, p *Pending, done *clientcore.Completion)
	// Tick runs on every client tick.
	Tick(c *Client)
}

// Client is a CURP client core serving many sessions; see the package doc.
type Client struct {
	ext         Extension
	id          wire.NodeID
	replicas    []wire.NodeID
	superquorum int
	retryTicks  int

	leader wire.NodeID
	term   uint64

	sessions *sessions.Table
	pending  map[wire.OpID]*Pending
	// ticks counts Tick calls; heard holds, per replica, the tick of the
	// last message from it.
	ticks uint64
	heard map[wire.NodeID]uint64
	// retries holds the operations in flight in the order they come up
	// for a re-send (see retryLater).
	retries []retry
	clientcore.Outbox
}

// Pending is an operation in flight.
type Pending struct {
	Req wire.Request
	// dueAt is the tick at which it is re-sent if still unanswered.
	dueAt uint64
	// Targets are the replicas the operation is (re)sent to.
	Targets []wire.NodeID
	// Spec is the leader's ok speculative reply and SpecFrom its sender.
	Spec     *wire.Reply
	SpecFrom wire.NodeID
	// Oks holds the witnesses' ok replies, one per witness.
	Oks []WitnessOk
	// reason is set once the fast path failed: a refusal, or a superquorum
	// the extension rejected.
	reason clientcore.SlowReason
}

// WitnessOk is one witness's acceptance of an operation.
type WitnessOk struct {
	From  wire.NodeID
	Reply *wire.Reply
}

// New builds a CURP client core.
func New(cfg Config) *Client {
	n := len(cfg.Replicas)
	return &Client{
		id:          cfg.ID,
		replicas:    cfg.Replicas,
		ext:         cfg.Extension,
		superquorum: quorum.Superquorum(n),
		retryTicks:  max(1, cfg.RetryTicks),
		sessions:    sessions.New(),
		pending:     make(map[wire.OpID]*Pending, 64*quorum.Majority(n)),
		heard:       make(map[wire.NodeID]uint64, n),
	}
}

// retry is an operation's place in the re-send queue; an entry whose
// operation completed, or was re-sent since, is skipped when it comes up.
type retry struct {
	p     *Pending
	dueAt uint64
}

// retryLater schedules p's re-send retryTicks from now. The queue is in
// due order, as every entry is due retryTicks after it was queued, so a
// tick looks only at what is due (and the entries of operations completed
// meanwhile), not at every operation in flight.
func (c *Client) retryLater(p *Pending) {
	p.dueAt = c.ticks + uint64(c.retryTicks)
	// Taken from the front, appended at the back: the array's consumed
	// front goes when append next moves it.
	c.retries = append(c.retries, retry{p, p.dueAt})
}

// Now is the client's clock: the number of ticks so far.
func (c *Client) Now() uint64 { return c.ticks }

// HeardSince reports whether a message from replica r arrived at or after
// tick t.
func (c *Client) HeardSince(r wire.NodeID, t uint64) bool {
	at, ok := c.heard[r]
	return ok && at >= t
}

// Submit implements clientcore.Core.
func (c *Client) Submit(sess uint64, op wire.Op) wire.OpID {
	op.ID = c.sessions.Start(sess)
	p := &Pending{Req: wire.Request{Op: op, AckedBelow: c.sessions.AckedBelow(sess)}, Targets: c.replicas}
	c.pending[op.ID] = p
	c.retryLater(p)
	if c.ext != nil {
		c.ext.Prepare(c, p)
	}
	if op.Level == wire.Weak && c.ext != nil {
		c.ext.SubmitWeak(c, p)
		return op.ID
	}
	c.sendTo(p.Targets, &p.Req)
	return op.ID
}

func (c *Client) sendTo(targets []wire.NodeID, req *wire.Request) {
	for _, r := range targets {
		c.Outbox.Send(r, req)
	}
}

// Send queues req for replica to.
func (c *Client) Send(to wire.NodeID, req *wire.Request) { c.Outbox.Send(to, req) }

// Replicas returns every replica.
func (c *Client) Replicas() []wire.NodeID { return c.replicas }

// Leader returns the leader the client believes in, or 0.
func (c *Client) Leader() wire.NodeID { return c.leader }

// Awaiting reports whether an operation has not completed yet.
func (c *Client) Awaiting(id wire.OpID) bool {
	_, ok := c.pending[id]
	return ok
}

// Cancel implements clientcore.Core.
func (c *Client) Cancel(id wire.OpID) {
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		c.sessions.Finish(id)
	}
}

// Tick implements clientcore.Core. Due retries go out in identity order so
// that a simulated run does not depend on map iteration order.
func (c *Client) Tick() {
	c.ticks++
	var due []*Pending
	for len(c.retries) > 0 && c.retries[0].dueAt <= c.ticks {
		r := c.retries[0]
		c.retries[0] = retry{}
		c.retries = c.retries[1:]
		if p := c.pending[r.p.Req.Op.ID]; p == r.p && p.dueAt == r.dueAt {
			due = append(due, p)
		}
	}
	for _, p := range due {
		c.retryLater(p)
	}
	slices.SortFunc(due, func(a, b *Pending) int { return a.Req.Op.ID.Compare(b.Req.Op.ID) })
	for _, p := range due {
		if p.Req.Op.Level == wire.Weak && c.ext != nil {
			// The weak path picks its own targets, which may have moved.
			p.Req.Flags |= wire.FlagRetry
			p.Req.AckedBelow = c.sessions.AckedBelow(p.Req.Op.ID.Session)
			c.ext.SubmitWeak(c, p)
			continue
		}
		retry := p.Req
		retry.Flags |= wire.FlagRetry
		retry.AckedBelow = c.sessions.AckedBelow(retry.Op.ID.Session)
		c.sendTo(p.Targets, &retry)
	}
	if c.ext != nil {
		c.ext.Tick(c)
	}
}

// Hold keeps a completed operation counted as in flight, so requests keep
// telling replicas not to forget it (a weak write not yet committed).
func (c *Client) Hold(id wire.OpID) { c.sessions.Hold(id) }

// Release ends a Hold.
func (c *Client) Release(id wire.OpID) { c.sessions.Finish(id) }

// Superquorum is the fast-path quorum size.
func (c *Client) Superquorum() int { return c.superquorum }

// RetryTicks is how many ticks an unanswered request waits before a resend.
func (c *Client) RetryTicks() int { return c.retryTicks }

// AckedBelow is the session's lowest sequence number still in flight.
func (c *Client) AckedBelow(session uint64) uint64 { return c.sessions.AckedBelow(session) }

// Step implements clientcore.Core.
func (c *Client) Step(from wire.NodeID, m wire.Message) {
	c.heard[from] = c.ticks
	rep, ok := m.(*wire.Reply)
	if !ok {
		return
	}
	c.learnLeader(rep)
	p := c.pending[rep.ID]
	if p == nil {
		if c.ext != nil {
			c.ext.WeakReply(c, from, nil, rep)
		}
		return
	}
	if p.Req.Op.Level == wire.Weak && c.ext != nil {
		c.ext.WeakReply(c, from, p, rep)
		return
	}
	switch rep.Kind {
	case wire.ReplySync:
		path := clientcore.PathCommitted
		if p.reason != clientcore.ReasonNone {
			path = clientcore.PathSlow
		}
		c.Complete(p, rep, path)
	case wire.ReplySpeculative:
		if rep.Ok && from == rep.Leader {
			p.Spec, p.SpecFrom = rep, from
		}
		c.refuse(p, rep)
		c.tryFastPath(p)
	case wire.ReplyWitness:
		if rep.Ok && !slices.ContainsFunc(p.Oks, func(w WitnessOk) bool { return w.From == from }) {
			p.Oks = append(p.Oks, WitnessOk{from, rep})
		}
		c.refuse(p, rep)
		c.tryFastPath(p)
	}
}

func (c *Client) learnLeader(rep *wire.Reply) {
	if rep.Term > c.term || (rep.Term == c.term && c.leader == 0) {
		c.term, c.leader = rep.Term, rep.Leader
	}
}

// tryFastPath completes the operation when the leader's ok speculative
// reply and the witnesses' oks together reach a superquorum.
func (c *Client) tryFastPath(p *Pending) {
	if p.Spec == nil {
		return
	}
	n := 1
	for _, w := range p.Oks {
		if c.Counts(p, w) {
			n++
		}
	}
	if n < c.superquorum {
		return
	}
	if c.ext != nil {
		// A superquorum answered but the extension's conditions may fail:
		// a sync reply then means the slow path, not a race with commit.
		if reason := c.ext.AcceptFastPath(c, p); reason != clientcore.ReasonNone {
			p.reason = reason
			return
		}
	}
	c.Complete(p, p.Spec, clientcore.PathFast)
}

// Counts reports whether a witness's ok counts towards the fast path of an
// operation with a speculative reply: it must come from another replica, in
// the leader's term, from a run of the witness the leader vouches for (one
// whose records are complete; see the replica's witnesses).
func (c *Client) Counts(p *Pending, w WitnessOk) bool {
	if w.From == p.SpecFrom || w.Reply.Term != p.Spec.Term && !broken.anyTerm {
		return false
	}
	return slices.Contains(p.Spec.Witnesses, wire.Witness{ID: w.From, Incarnation: w.Reply.Incarnation})
}

func (c *Client) refuse(p *Pending, rep *wire.Reply) {
	if !rep.Ok && p.reason == clientcore.ReasonNone {
		p.reason = clientcore.ReasonConflict
	}
}

// Complete finishes an operation with the result in rep.
func (c *Client) Complete(p *Pending, rep *wire.Reply, path clientcore.Path) {
	id := p.Req.Op.ID
	delete(c.pending, id)
	c.sessions.Finish(id)
	done := clientcore.Completion{
		ID: id, Op: p.Req.Op, Found: rep.Found, Value: rep.Value, Slot: rep.Slot, Path: path,
	}
	if path == clientcore.PathSlow {
		done.Reason = p.reason
	}
	if c.ext != nil {
		c.ext.Completed(c, p, &done)
	}
	c.Finish(done)
}
