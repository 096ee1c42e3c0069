package curpclient

import (
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
}

// Client is a CURP client core serving many sessions; see the package doc.
type Client struct {
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
	// the hybrid protocol rejected (RejectFastPath).
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
		superquorum: quorum.Superquorum(n),
		retryTicks:  max(1, cfg.RetryTicks),
		sessions:    sessions.New(),
		pending:     make(map[wire.OpID]*Pending, 64*quorum.Majority(n)),
		heard:       make(map[wire.NodeID]uint64, n),
	}
}

var _ clientcore.Core = (*Client)(nil)

// Submit implements clientcore.Core: plain CURP sends every operation, weak
// ones too, down the strong path.
func (c *Client) Submit(sess uint64, op wire.Op) wire.OpID {
	p := c.Start(sess, op)
	c.SendStrong(p)
	return p.Req.Op.ID
}

// Start numbers a new operation of session sess, counts it in flight and
// schedules its re-send, but sends nothing: the caller completes the
// request, then sends it down the strong path (SendStrong) or its own.
func (c *Client) Start(sess uint64, op wire.Op) *Pending {
	op.ID = c.sessions.Start(sess)
	p := &Pending{Req: wire.Request{Op: op, AckedBelow: c.sessions.AckedBelow(sess)}, Targets: c.replicas}
	c.pending[op.ID] = p
	c.retryLater(p)
	return p
}

// SendStrong sends p's request to its targets, every replica unless the
// caller chose otherwise.
func (c *Client) SendStrong(p *Pending) { c.sendTo(p.Targets, &p.Req) }

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

// Hold keeps a completed operation counted as in flight, so requests keep
// telling replicas not to forget it (a weak write not yet committed).
func (c *Client) Hold(id wire.OpID) { c.sessions.Hold(id) }

// Release ends a Hold.
func (c *Client) Release(id wire.OpID) { c.sessions.Finish(id) }

// Superquorum is the fast-path quorum size.
func (c *Client) Superquorum() int { return c.superquorum }

// AckedBelow is the session's lowest sequence number still in flight.
func (c *Client) AckedBelow(session uint64) uint64 { return c.sessions.AckedBelow(session) }
