package hoclient

import (
	"maps"
	"slices"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curpclient"
	"github.com/hybridkv/hybridkv/internal/weakpath"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Client is CURP-HO's extension of a CURP client.
type Client struct {
	bound    weakpath.Binding
	sessions map[uint64]*session
	floors   weakpath.Floors
	ticks    int
}

// session is what the client tracks of one session's weak writes.
type session struct {
	lastWeak uint64
	// writeSet holds the weak writes not yet known committed, by sequence
	// number, for the fast-path check and for re-sending.
	writeSet map[uint64]*wire.Request
}

var _ curpclient.Extension = (*Client)(nil)

// New returns the client extension bound to replica bound.
func New(bound wire.NodeID) *Client {
	return &Client{bound: weakpath.NewBinding(bound),
		sessions: make(map[uint64]*session), floors: make(weakpath.Floors)}
}

func (x *Client) session(id uint64) *session {
	s := x.sessions[id]
	if s == nil {
		s = &session{writeSet: make(map[uint64]*wire.Request)}
		x.sessions[id] = s
	}
	return s
}

// Prepare names the session's previous weak write in every request while
// it is not known committed, so the leader logs the request after it and
// the bound replica serves a read once it holds it. A committed one needs
// no naming: anything logged from now on lands after it, and the session's
// floor already covers its slot. Named anyway, it would hold the request
// back for good once the session had expired, as no replica would know it.
func (x *Client) Prepare(_ *curpclient.Client, p *curpclient.Pending) {
	x.floors.Issued(p.Req.Op.ID)
	s := x.session(p.Req.Op.ID.Session)
	p.Req.PrevWeak = 0
	if _, uncommitted := s.writeSet[s.lastWeak]; uncommitted {
		p.Req.PrevWeak = s.lastWeak
	}
	if p.Req.Op.Level == wire.Weak && p.Req.Op.Kind.IsWrite() {
		s.lastWeak = p.Req.Op.ID.Seq
	}
}

// SubmitWeak broadcasts a weak write (only the bound replica answers) and
// sends a weak read to the bound replica.
func (x *Client) SubmitWeak(c *curpclient.Client, p *curpclient.Pending) {
	op := &p.Req.Op
	if p.Req.Flags&wire.FlagRetry != 0 {
		x.bound.Missed(c, c.Replicas())
	}
	if !op.Kind.IsWrite() {
		p.Req.Flags |= wire.FlagReplyWanted
		x.floors.Stamp(&p.Req)
		p.Targets = []wire.NodeID{x.bound.Replica()}
		c.Send(x.bound.Replica(), &p.Req)
		return
	}
	req := p.Req
	x.session(op.ID.Session).writeSet[op.ID.Seq] = &req
	// Re-sends are this extension's: until the write is committed, not
	// just until the bound replica acknowledged it.
	p.Targets = nil
	x.broadcast(c, &req)
}

func (x *Client) broadcast(c *curpclient.Client, req *wire.Request) {
	bound := *req
	bound.Flags |= wire.FlagReplyWanted
	for _, r := range c.Replicas() {
		if r == x.bound.Replica() {
			c.Send(r, &bound)
		} else {
			c.Send(r, req)
		}
	}
}

// WeakReply completes weak operations and clears committed weak writes.
func (x *Client) WeakReply(c *curpclient.Client, from wire.NodeID, p *curpclient.Pending, rep *wire.Reply) {
	s := x.sessions[rep.ID.Session]
	if s == nil {
		return
	}
	if req, ok := s.writeSet[rep.ID.Seq]; ok {
		x.writeReply(c, from, p, s, req, rep)
		return
	}
	if p == nil || p.Req.Op.Kind.IsWrite() || from != x.bound.Replica() || rep.Kind != wire.ReplyWeak {
		return
	}
	x.bound.Answered(from)
	if rep.Lost() {
		weakpath.Escalate(c, p)
		return
	}
	x.floors.ObserveState(rep.ID.Session, rep.Applied)
	x.floors.Satisfied(rep.ID.Session, p.Req.ReadAfter)
	c.Complete(p, rep, clientcore.PathWeak)
}

func (x *Client) writeReply(c *curpclient.Client, from wire.NodeID, p *curpclient.Pending, s *session, req *wire.Request, rep *wire.Reply) {
	committed := rep.Slot > 0 && (rep.Kind == wire.ReplyWeak || rep.Kind == wire.ReplySync)
	if committed {
		x.floors.ObserveCommitted(rep.ID, rep.Slot)
		delete(s.writeSet, rep.ID.Seq)
		if p == nil {
			c.Release(rep.ID)
			return
		}
	} else if from != x.bound.Replica() || !rep.Ok || p == nil {
		return
	}
	x.bound.Answered(from)
	c.Complete(p, &wire.Reply{Kind: wire.ReplyWeak, ID: rep.ID, Ok: true, Slot: rep.Slot}, clientcore.PathWeak)
	if !committed {
		// Acknowledged but not committed: keep replicas from forgetting it.
		c.Hold(rep.ID)
	}
}

// AcceptFastPath requires, besides CURP's superquorum, that the replies
// forming it hold, pooled or applied, every weak write the session issued
// before the operation and does not know committed, and for a read that
// they agree on the read dependency.
func (x *Client) AcceptFastPath(c *curpclient.Client, p *curpclient.Pending) clientcore.SlowReason {
	var need []uint64
	if s := x.sessions[p.Req.Op.ID.Session]; s != nil {
		for seq := range s.writeSet {
			if seq < p.Req.Op.ID.Seq {
				need = append(need, seq)
			}
		}
	}
	read := !p.Req.Op.Kind.IsWrite()
	check := func(rep *wire.Reply) clientcore.SlowReason {
		for _, seq := range need {
			if seq > rep.DepsApplied && !slices.Contains(rep.Deps, seq) {
				return clientcore.ReasonCausalDep
			}
		}
		if read && rep.ReadDep != p.Spec.ReadDep {
			return clientcore.ReasonReadDep
		}
		return clientcore.ReasonNone
	}
	if reason := check(p.Spec); reason != clientcore.ReasonNone {
		return reason
	}
	n, why := 1, clientcore.ReasonNone
	for _, w := range p.Oks {
		if !c.Counts(p, w) {
			continue
		}
		if reason := check(w.Reply); reason == clientcore.ReasonNone {
			n++
		} else if why == clientcore.ReasonNone {
			why = reason
		}
	}
	if n >= c.Superquorum() {
		return clientcore.ReasonNone
	}
	return why
}

// Completed raises the session's floor; a strong operation that completed
// through the log also proves the session's earlier weak writes committed,
// and those already acknowledged leave the write set. One still awaiting
// its acknowledgement (a pipelined session's strong operation may complete
// first) stays in flight until a reply completes it: released, it let
// replicas forget its result, so the leader no longer answered its
// resends; the next resend put it back in the write set, and acknowledged
// by the bound replica it was held there, re-sent for good without an
// answer, until its session expired and a resend took effect again.
func (x *Client) Completed(c *curpclient.Client, p *curpclient.Pending, done *clientcore.Completion) {
	x.floors.ObserveCompletion(p, done)
	op := &p.Req.Op
	if op.Level == wire.Weak || done.Path == clientcore.PathFast {
		return
	}
	if s := x.sessions[op.ID.Session]; s != nil {
		for seq := range s.writeSet {
			id := wire.OpID{Session: op.ID.Session, Seq: seq}
			if seq < op.ID.Seq && !c.Awaiting(id) {
				delete(s.writeSet, seq)
				c.Release(id)
			}
		}
	}
}

// Tick moves the binding back to the closest replica once it answers
// again, and re-sends uncommitted weak writes: a lost write must still
// reach the leader's log, and in session order.
func (x *Client) Tick(c *curpclient.Client) {
	x.bound.Tick(c)
	x.ticks++
	if x.ticks%c.RetryTicks() != 0 {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(x.sessions)) {
		s := x.sessions[id]
		for _, seq := range slices.Sorted(maps.Keys(s.writeSet)) {
			retry := *s.writeSet[seq]
			retry.Flags |= wire.FlagRetry
			retry.AckedBelow = c.AckedBelow(id)
			x.broadcast(c, &retry)
		}
	}
}
