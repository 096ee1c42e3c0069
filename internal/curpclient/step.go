package curpclient

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Step implements clientcore.Core: plain CURP handles every reply to a
// pending operation as one to a strong operation, and takes the fast path
// whenever a superquorum answered.
func (c *Client) Step(from wire.NodeID, m wire.Message) {
	rep, p := c.Receive(from, m)
	if p == nil {
		return
	}
	if c.StepStrong(from, p, rep).Superquorum {
		c.CompleteFast(p)
	}
}

// Receive notes a message from replica from and the leader a reply names.
// It returns the reply, nil for any other message, and the operation it
// answers, nil when that is no longer pending: which of the strong path
// (StepStrong) or the caller's own handles it is the caller's choice.
func (c *Client) Receive(from wire.NodeID, m wire.Message) (*wire.Reply, *Pending) {
	c.heard[from] = c.ticks
	rep, ok := m.(*wire.Reply)
	if !ok {
		return nil, nil
	}
	c.learnLeader(rep)
	return rep, c.pending[rep.ID]
}

func (c *Client) learnLeader(rep *wire.Reply) {
	if rep.Term > c.term || (rep.Term == c.term && c.leader == 0) {
		c.term, c.leader = rep.Term, rep.Leader
	}
}

// Outcome is what a reply did to a strong operation.
type Outcome struct {
	// Done is the operation's completion, already queued for the driver,
	// when the reply completed it (the leader's sync reply).
	Done *clientcore.Completion
	// Superquorum is set when the leader's ok speculative reply and the
	// witnesses' oks now reach a superquorum (p.Spec and p.Oks hold the
	// replies that form it). The operation is still pending: the caller
	// vets the fast path, then takes it (CompleteFast) or says why not
	// (RejectFastPath). A later reply may reach it again.
	Superquorum bool
}

// StepStrong handles a reply from replica from to p, a pending strong
// operation.
func (c *Client) StepStrong(from wire.NodeID, p *Pending, rep *wire.Reply) Outcome {
	switch rep.Kind {
	case wire.ReplySync:
		path := clientcore.PathCommitted
		if p.reason != clientcore.ReasonNone {
			path = clientcore.PathSlow
		}
		return Outcome{Done: c.Complete(p, rep, path)}
	case wire.ReplySpeculative:
		if rep.Ok && from == rep.Leader {
			p.Spec, p.SpecFrom = rep, from
		}
		c.refuse(p, rep)
		return Outcome{Superquorum: c.reachesSuperquorum(p)}
	case wire.ReplyWitness:
		if rep.Ok && !slices.ContainsFunc(p.Oks, func(w WitnessOk) bool { return w.From == from }) {
			p.Oks = append(p.Oks, WitnessOk{from, rep})
		}
		c.refuse(p, rep)
		return Outcome{Superquorum: c.reachesSuperquorum(p)}
	}
	return Outcome{}
}

// reachesSuperquorum reports whether the leader's ok speculative reply and
// the witnesses' oks together reach a superquorum.
func (c *Client) reachesSuperquorum(p *Pending) bool {
	if p.Spec == nil {
		return false
	}
	n := 1
	for _, w := range p.Oks {
		if c.Counts(p, w) {
			n++
		}
	}
	return n >= c.superquorum
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

// CompleteFast completes p on the fast path with the leader's speculative
// result, once a superquorum answered.
func (c *Client) CompleteFast(p *Pending) *clientcore.Completion {
	return c.Complete(p, p.Spec, clientcore.PathFast)
}

// RejectFastPath notes why a superquorum that answered p does not make the
// fast path (a hybrid protocol's conditions failed): a sync reply then
// means the slow path, not a race with commit.
func (c *Client) RejectFastPath(p *Pending, reason clientcore.SlowReason) { p.reason = reason }

// Complete finishes an operation with the result in rep, queues its
// completion for the driver and returns it: a hybrid protocol's core sees
// every completion this way before the driver does.
func (c *Client) Complete(p *Pending, rep *wire.Reply, path clientcore.Path) *clientcore.Completion {
	id := p.Req.Op.ID
	delete(c.pending, id)
	c.sessions.Finish(id)
	done := &clientcore.Completion{
		ID: id, Op: p.Req.Op, Found: rep.Found, Value: rep.Value, Revision: rep.Revision, Slot: rep.Slot, Path: path,
	}
	if path == clientcore.PathSlow {
		done.Reason = p.reason
	}
	c.Finish(*done)
	return done
}
