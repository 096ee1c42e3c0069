package htclient

import (
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curpclient"
	"github.com/hybridkv/hybridkv/internal/weakpath"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Client is CURP-HT's client core: CURP's client for strong operations,
// and CURP-HT's weak path.
type Client struct {
	curp    *curpclient.Client
	closest weakpath.Binding
	floors  weakpath.Floors
	// ignoreCompletions drops the floors completions raise (a mutation
	// test's bug; see IgnoreCompletionFloors).
	ignoreCompletions bool
	// ackOnLog: see AckWeakWritesOnLog.
	ackOnLog bool
}

// AckWeakWritesOnLog has the leader answer the client's weak writes once
// its own log holds them, before replication (wire.FlagAckOnLog).
func (x *Client) AckWeakWritesOnLog() { x.ackOnLog = true }

var _ clientcore.Core = (*Client)(nil)

// New returns a CURP-HT client core; weak reads go to closest.
func New(cfg curpclient.Config, closest wire.NodeID) *Client {
	return &Client{curp: curpclient.New(cfg), closest: weakpath.NewBinding(closest), floors: make(weakpath.Floors)}
}

// IgnoreCompletionFloors makes the client's sessions remember nothing of
// what they wrote or read: no floor from completions. It is a bug the
// checked simulation must catch (package protocols' mutation tests).
func (x *Client) IgnoreCompletionFloors() { x.ignoreCompletions = true }

// Submit implements clientcore.Core; every operation the session issues
// counts towards its floor.
func (x *Client) Submit(sess uint64, op wire.Op) wire.OpID {
	p := x.curp.Start(sess, op)
	x.floors.Issued(p.Req.Op.ID)
	if p.Req.Op.Level == wire.Weak {
		if x.ackOnLog && p.Req.Op.Kind.IsWrite() {
			p.Req.Flags |= wire.FlagAckOnLog
		}
		x.sendWeak(p)
	} else {
		x.curp.SendStrong(p)
	}
	return p.Req.Op.ID
}

// sendWeak sends a weak write to the leader (to everyone while the leader
// is unknown: only the leader logs it) and a weak read to the closest
// replica.
func (x *Client) sendWeak(p *curpclient.Pending) {
	c := x.curp
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

// Tick implements clientcore.Core: CURP's retries cover CURP-HT's weak
// operations too, and weak reads move back to the closest replica once it
// answers again.
func (x *Client) Tick() {
	for _, p := range x.curp.Due() {
		if p.Req.Op.Level != wire.Weak {
			x.curp.Resend(p)
			continue
		}
		// The weak path picks its own targets, which may have moved.
		x.curp.MarkRetry(&p.Req)
		x.sendWeak(p)
	}
	x.closest.Tick(x.curp)
}

// Step implements clientcore.Core: CURP-HT's strong path is CURP's, fast
// path included.
func (x *Client) Step(from wire.NodeID, m wire.Message) {
	rep, p := x.curp.Receive(from, m)
	switch {
	case p == nil:
	case p.Req.Op.Level == wire.Weak:
		x.weakReply(from, p, rep)
	default:
		out := x.curp.StepStrong(from, p, rep)
		if out.Done != nil {
			x.completed(p, out.Done)
		} else if out.Superquorum {
			x.completed(p, x.curp.CompleteFast(p))
		}
	}
}

// weakReply completes weak operations.
func (x *Client) weakReply(from wire.NodeID, p *curpclient.Pending, rep *wire.Reply) {
	if p.Req.Op.Kind.IsWrite() {
		x.writeReply(p, rep)
		return
	}
	if from != x.closest.Replica() || rep.Kind != wire.ReplyWeak {
		return
	}
	x.closest.Answered(from)
	if rep.Lost() {
		weakpath.Escalate(x.curp, p)
		return
	}
	x.floors.ObserveState(p.Req.Op.ID.Session, rep.Applied)
	x.complete(p, rep, clientcore.PathWeak)
}

func (x *Client) writeReply(p *curpclient.Pending, rep *wire.Reply) {
	switch rep.Kind {
	case wire.ReplyNotLeader:
		if rep.Leader != 0 && rep.Leader != p.Targets[0] {
			p.Targets = []wire.NodeID{rep.Leader}
			x.curp.Send(rep.Leader, &p.Req)
		}
	case wire.ReplyWeak, wire.ReplySync:
		if rep.Kind == wire.ReplyWeak && p.Req.Flags&wire.FlagAckOnLog != 0 {
			// Answered once the leader logged it: the slot is where that
			// leader's log holds it, which a later leader may replace, so
			// the session's reads wait for that very entry (or learn it
			// was replaced), as for a fast-path result.
			x.floors.ObserveSpeculative(p.Req.Op.ID.Session, wire.Position{Term: rep.Term, Index: rep.Slot})
			x.curp.Complete(p, rep, clientcore.PathWeak)
			return
		}
		x.complete(p, rep, clientcore.PathWeak)
	}
}

func (x *Client) complete(p *curpclient.Pending, rep *wire.Reply, path clientcore.Path) {
	x.completed(p, x.curp.Complete(p, rep, path))
}

// completed raises the session's floor to what the operation observed: a
// weak write or a strong operation through the log, its committed slot; a
// fast-path result, the leader's speculative position.
func (x *Client) completed(p *curpclient.Pending, done *clientcore.Completion) {
	if !x.ignoreCompletions {
		x.floors.ObserveCompletion(p, done)
	}
}

// Cancel implements clientcore.Core.
func (x *Client) Cancel(id wire.OpID) { x.curp.Cancel(id) }

// Ready implements clientcore.Core.
func (x *Client) Ready() ([]wire.Envelope, []clientcore.Completion) { return x.curp.Ready() }

// Advance implements clientcore.Core.
func (x *Client) Advance() { x.curp.Advance() }

// Leader implements clientcore.Core.
func (x *Client) Leader() wire.NodeID { return x.curp.Leader() }
