package raftclient

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/sessions"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Client is the Raft baseline's client core.
type Client struct {
	replicas   []wire.NodeID
	retryTicks int
	leader     wire.NodeID
	term       uint64
	// guess rotates through the replicas while no leader is known.
	guess    int
	sessions *sessions.Table
	pending  map[wire.OpID]*pending
	// ticks counts Tick calls; heard holds, per replica, the tick its last
	// message arrived at.
	ticks uint64
	heard map[wire.NodeID]uint64
	clientcore.Outbox
}

type pending struct {
	req wire.Request
	age int
}

// New builds a client core.
func New(replicas []wire.NodeID, retryTicks int) *Client {
	return &Client{replicas: replicas, retryTicks: max(1, retryTicks),
		sessions: sessions.New(), pending: make(map[wire.OpID]*pending), heard: make(map[wire.NodeID]uint64)}
}

// Start gives an operation of session sess its identity, for a caller that
// sends it another way than Submit (a hybrid protocol's weak read), and
// returns it with the session's lowest unacknowledged sequence number.
func (c *Client) Start(sess uint64) (id wire.OpID, ackedBelow uint64) {
	return c.sessions.Start(sess), c.sessions.AckedBelow(sess)
}

// End ends an operation begun with Start.
func (c *Client) End(id wire.OpID) { c.sessions.Finish(id) }

// Waiting reports whether operation id was submitted and is not complete.
func (c *Client) Waiting(id wire.OpID) bool {
	_, ok := c.pending[id]
	return ok
}

// Replicas lists the replicas.
func (c *Client) Replicas() []wire.NodeID { return c.replicas }

// Now is the time in ticks.
func (c *Client) Now() uint64 { return c.ticks }

// HeardSince reports whether a message from replica r arrived at or after
// tick t.
func (c *Client) HeardSince(r wire.NodeID, t uint64) bool {
	at, ok := c.heard[r]
	return ok && at >= t
}

// RetryTicks is how many ticks an unanswered request waits before a resend.
func (c *Client) RetryTicks() int { return c.retryTicks }

// Submit implements clientcore.Core.
func (c *Client) Submit(sess uint64, op wire.Op) wire.OpID { return c.SubmitFlagged(sess, op, 0) }

// SubmitFlagged submits op with flags on its request (a hybrid protocol's
// wire.FlagAckOnLog).
func (c *Client) SubmitFlagged(sess uint64, op wire.Op, flags wire.RequestFlags) wire.OpID {
	op.ID = c.sessions.Start(sess)
	p := &pending{req: wire.Request{Op: op, AckedBelow: c.sessions.AckedBelow(sess), Flags: flags}}
	c.pending[op.ID] = p
	c.send(&p.req)
	return op.ID
}

// send goes to the leader, or to one replica after another while none is
// known: each answers with the leader it knows.
func (c *Client) send(req *wire.Request) {
	to := c.leader
	if to == 0 {
		to = c.replicas[c.guess%len(c.replicas)]
	}
	c.Send(to, req)
}

// Cancel implements clientcore.Core.
func (c *Client) Cancel(id wire.OpID) {
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		c.sessions.Finish(id)
	}
}

// Step implements clientcore.Core.
func (c *Client) Step(from wire.NodeID, m wire.Message) {
	rep, ok := m.(*wire.Reply)
	if !ok {
		return
	}
	c.heard[from] = c.ticks
	p := c.pending[rep.ID]
	switch rep.Kind {
	case wire.ReplyNotLeader:
		// Follow a hint at once; without one (an election is on), wait
		// for the retry rather than bounce between followers.
		if c.redirect(from, rep) && p != nil {
			c.send(&p.req)
		}
	case wire.ReplySync:
		c.learn(from, rep.Term)
		if p != nil {
			c.complete(p, rep)
		}
	case wire.ReplyWeak:
		// A weak write the leader answered once it logged it
		// (wire.FlagAckOnLog); weak reads are not this client's.
		if p != nil && p.req.Op.Kind.IsWrite() && rep.Ok {
			c.learn(from, rep.Term)
			c.completeAs(p, rep, clientcore.PathWeak)
		}
	}
}

// redirect takes a follower's hint and reports whether it names a leader;
// without one the next guess moves on to another replica.
func (c *Client) redirect(from wire.NodeID, rep *wire.Reply) bool {
	if rep.Leader != 0 && rep.Leader != from && rep.Term >= c.term {
		c.leader, c.term = rep.Leader, rep.Term
		return true
	}
	if from == c.leader {
		c.leader = 0
	}
	c.guess++
	return false
}

func (c *Client) learn(leader wire.NodeID, term uint64) {
	if term >= c.term {
		c.leader, c.term = leader, term
	}
}

func (c *Client) complete(p *pending, rep *wire.Reply) { c.completeAs(p, rep, clientcore.PathLog) }

// completeAs completes p with rep; path is PathLog for a result after
// commit, PathWeak for a weak write answered once the leader logged it.
func (c *Client) completeAs(p *pending, rep *wire.Reply, path clientcore.Path) {
	id := p.req.Op.ID
	delete(c.pending, id)
	c.sessions.Finish(id)
	c.Finish(clientcore.Completion{ID: id, Op: p.req.Op,
		Found: rep.Found, Value: rep.Value, Revision: rep.Revision, Slot: rep.Slot, Path: path})
}

// Tick implements clientcore.Core: unanswered operations are re-sent, in
// identity order so a simulated run does not depend on map order. A leader
// that stays silent is given up on.
func (c *Client) Tick() {
	c.ticks++
	var due []*pending
	for _, p := range c.pending {
		p.age++
		if p.age >= c.retryTicks {
			p.age = 0
			due = append(due, p)
		}
	}
	if len(due) == 0 {
		return
	}
	c.leader = 0
	c.guess++
	slices.SortFunc(due, func(a, b *pending) int { return a.req.Op.ID.Compare(b.req.Op.ID) })
	for _, p := range due {
		retry := p.req
		retry.Flags |= wire.FlagRetry
		retry.AckedBelow = c.sessions.AckedBelow(retry.Op.ID.Session)
		c.send(&retry)
	}
}

// Leader returns the leader the client believes in, or 0.
func (c *Client) Leader() wire.NodeID { return c.leader }
