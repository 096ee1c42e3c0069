package curpht

import (
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Client is CURP-HT's extension of a CURP client.
type Client struct {
	closest Binding
	cache   *Cache
	floors  Floors
}

var _ curp.ClientExtension = (*Client)(nil)

// NewClient returns the client extension; weak reads go to closest.
func NewClient(closest wire.NodeID) *Client {
	return &Client{closest: NewBinding(closest), cache: NewCache(), floors: make(Floors)}
}

// SubmitWeak sends a weak write to the leader (to everyone while the leader
// is unknown: only the leader logs it) and a weak read to the closest
// replica.
func (x *Client) SubmitWeak(c *curp.Client, p *curp.Pending) {
	retry := p.Req.Flags&wire.FlagRetry != 0
	switch {
	case !p.Req.Op.Kind.IsWrite():
		if retry {
			x.closest.Missed(c.Replicas())
		}
		p.Req.MinApplied = x.floors.Of(p.Req.Op.ID.Session)
		p.Targets = []wire.NodeID{x.closest.Replica()}
	case c.Leader() != 0 && !retry:
		p.Targets = []wire.NodeID{c.Leader()}
	default:
		// No leader known, or it stayed silent: ask everyone; followers
		// answer with the leader they know.
		p.Targets = c.Replicas()
	}
	for _, to := range p.Targets {
		c.Send(to, &p.Req)
	}
}

// WeakReply completes weak operations.
func (x *Client) WeakReply(c *curp.Client, from wire.NodeID, p *curp.Pending, rep *wire.Reply) {
	if p == nil {
		return
	}
	op := &p.Req.Op
	if op.Kind.IsWrite() {
		x.writeReply(c, p, rep)
		return
	}
	if from != x.closest.Replica() || rep.Kind != wire.ReplyWeak {
		return
	}
	x.closest.Answered(from)
	x.cache.Observe(rep.Applied)
	x.floors.Observe(op.ID.Session, rep.Applied)
	if e, ok := x.cache.Fresher(op.ID.Session, op.Key, rep.Applied); ok {
		cached := *rep
		cached.Found, cached.Value, cached.Slot = e.Found, e.Value, e.Version
		c.Complete(p, &cached, protocol.PathWeak)
		return
	}
	c.Complete(p, rep, protocol.PathWeak)
}

func (x *Client) writeReply(c *curp.Client, p *curp.Pending, rep *wire.Reply) {
	switch rep.Kind {
	case wire.ReplyNotLeader:
		if rep.Leader != 0 && rep.Leader != p.Targets[0] {
			p.Targets = []wire.NodeID{rep.Leader}
			c.Send(rep.Leader, &p.Req)
		}
	case wire.ReplyWeak, wire.ReplySync:
		c.Complete(p, rep, protocol.PathWeak)
	}
}

// Prepare: CURP-HT's requests need nothing beyond CURP's.
func (*Client) Prepare(*curp.Client, *curp.Pending) {}

// Tick: CURP's retries cover CURP-HT's weak operations.
func (*Client) Tick(*curp.Client) {}

// AcceptFastPath: CURP-HT's strong path is CURP's.
func (*Client) AcceptFastPath(*curp.Client, *curp.Pending) protocol.SlowReason {
	return protocol.ReasonNone
}

// Completed feeds the session's cache with what the operation wrote or read.
func (x *Client) Completed(_ *curp.Client, p *curp.Pending, done *protocol.Completion) {
	op := &p.Req.Op
	x.floors.Observe(op.ID.Session, done.Slot)
	switch {
	case op.Kind.IsWrite():
		x.cache.Put(op.ID.Session, op.Key, Entry{Found: true, Value: op.Value, Version: done.Slot, Seq: op.ID.Seq})
	case op.Level == wire.Strong:
		x.cache.Put(op.ID.Session, op.Key, Entry{Found: done.Found, Value: done.Value, Version: done.Slot, Seq: op.ID.Seq})
	}
}

// Cache exposes the cache to tests.
func (x *Client) Cache() *Cache { return x.cache }
