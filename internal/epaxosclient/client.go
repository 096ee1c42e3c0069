// Package epaxosclient is EPaxos's client core: every operation goes to
// the client's closest replica, which leads its instance and answers once
// it executed it; an unanswered operation goes to the next replica.
package epaxosclient

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/sessions"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Client is EPaxos's client core.
type Client struct {
	replicas   []wire.NodeID
	closest    int
	retryTicks int
	sessions   *sessions.Table
	pending    map[wire.OpID]*pending
	clientcore.Outbox
}

type pending struct {
	req wire.Request
	age int
	// tries counts the sends, the first included: each retry goes to the
	// next replica.
	tries int
}

// New builds a client core whose operations go to closest first.
func New(replicas []wire.NodeID, closest wire.NodeID, retryTicks int) *Client {
	i := max(slices.Index(replicas, closest), 0)
	return &Client{replicas: replicas, closest: i, retryTicks: max(1, retryTicks),
		sessions: sessions.New(), pending: make(map[wire.OpID]*pending)}
}

// Submit implements clientcore.Core.
func (c *Client) Submit(sess uint64, op wire.Op) wire.OpID {
	op.ID = c.sessions.Start(sess)
	p := &pending{req: wire.Request{Op: op, AckedBelow: c.sessions.AckedBelow(sess)}}
	c.pending[op.ID] = p
	c.send(p)
	return op.ID
}

func (c *Client) send(p *pending) {
	to := c.replicas[(c.closest+p.tries)%len(c.replicas)]
	p.tries++
	c.Send(to, &p.req)
}

// Cancel implements clientcore.Core.
func (c *Client) Cancel(id wire.OpID) {
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		c.sessions.Finish(id)
	}
}

// Step implements clientcore.Core: a replica answers once it executed the
// operation; Ok says its instance committed on the fast path.
func (c *Client) Step(_ wire.NodeID, m wire.Message) {
	rep, ok := m.(*wire.Reply)
	if !ok || rep.Kind != wire.ReplySync {
		return
	}
	p := c.pending[rep.ID]
	if p == nil {
		return
	}
	delete(c.pending, rep.ID)
	c.sessions.Finish(rep.ID)
	path := clientcore.PathSlow
	if rep.Ok {
		path = clientcore.PathFast
	}
	// No slot: EPaxos has no log whose positions the checker could
	// compare.
	c.Finish(clientcore.Completion{ID: rep.ID, Op: p.req.Op,
		Found: rep.Found, Value: rep.Value, Revision: rep.Revision, Path: path})
}

// Tick implements clientcore.Core: unanswered operations go to the next
// replica, in identity order so a simulated run does not depend on map
// order.
func (c *Client) Tick() {
	var due []*pending
	for _, p := range c.pending {
		p.age++
		if p.age >= c.retryTicks {
			p.age = 0
			due = append(due, p)
		}
	}
	slices.SortFunc(due, func(a, b *pending) int { return a.req.Op.ID.Compare(b.req.Op.ID) })
	for _, p := range due {
		p.req.Flags |= wire.FlagRetry
		p.req.AckedBelow = c.sessions.AckedBelow(p.req.Op.ID.Session)
		c.send(p)
	}
}

// Leader implements clientcore.Core: there is none.
func (c *Client) Leader() wire.NodeID { return 0 }
