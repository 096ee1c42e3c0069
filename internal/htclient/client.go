package htclient

import (
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curpclient"
	"github.com/hybridkv/hybridkv/internal/weakpath"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Client is CURP-HT's extension of a CURP client.
type Client struct {
	closest weakpath.Binding
	floors  weakpath.Floors
}

var _ curpclient.Extension = (*Client)(nil)

// New returns the client extension; weak reads go to closest.
func New(closest wire.NodeID) *Client {
	return &Client{closest: weakpath.NewBinding(closest), floors: make(weakpath.Floors)}
}

// SubmitWeak sends a weak write to the leader (to everyone while the leader
// is unknown: only the leader logs it) and a weak read to the closest
// replica.
func (x *Client) SubmitWeak(c *curpclient.Client, p *curpclient.Pending) {
	retry := p.Req.Flags&wire.FlagRetry != 0
	switch {
	case !p.Req.Op.Kind.IsWrite():
		if retry {
			x.closest.Missed(c, c.Replicas())
		}
		x.floors.Stamp(&p.Req)
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
func (x *Client) WeakReply(c *curpclient.Client, from wire.NodeID, p *curpclient.Pending, rep *wire.Reply) {
	if p == nil {
		return
	}
	if p.Req.Op.Kind.IsWrite() {
		x.writeReply(c, p, rep)
		return
	}
	if from != x.closest.Replica() || rep.Kind != wire.ReplyWeak {
		return
	}
	x.closest.Answered(from)
	if rep.Lost() {
		weakpath.Escalate(c, p)
		return
	}
	x.floors.ObserveState(p.Req.Op.ID.Session, rep.Applied)
	c.Complete(p, rep, clientcore.PathWeak)
}

func (x *Client) writeReply(c *curpclient.Client, p *curpclient.Pending, rep *wire.Reply) {
	switch rep.Kind {
	case wire.ReplyNotLeader:
		if rep.Leader != 0 && rep.Leader != p.Targets[0] {
			p.Targets = []wire.NodeID{rep.Leader}
			c.Send(rep.Leader, &p.Req)
		}
	case wire.ReplyWeak, wire.ReplySync:
		c.Complete(p, rep, clientcore.PathWeak)
	}
}

// Prepare notes every operation the session issues.
func (x *Client) Prepare(_ *curpclient.Client, p *curpclient.Pending) { x.floors.Issued(p.Req.Op.ID) }

// Tick moves weak reads back to the closest replica once it answers again;
// CURP's retries cover CURP-HT's weak operations.
func (x *Client) Tick(c *curpclient.Client) { x.closest.Tick(c) }

// AcceptFastPath: CURP-HT's strong path is CURP's.
func (*Client) AcceptFastPath(*curpclient.Client, *curpclient.Pending) clientcore.SlowReason {
	return clientcore.ReasonNone
}

// Completed raises the session's floor to what the operation observed: a
// weak write or a strong operation through the log, its committed slot; a
// fast-path result, the leader's speculative position.
func (x *Client) Completed(_ *curpclient.Client, p *curpclient.Pending, done *clientcore.Completion) {
	x.floors.ObserveCompletion(p, done)
}
