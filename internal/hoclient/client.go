package hoclient

import (
	"maps"
	"slices"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curpclient"
	"github.com/hybridkv/hybridkv/internal/weakpath"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Client is CURP-HO's client core: CURP's client for strong operations,
// with CURP-HO's conditions on the fast path, and CURP-HO's weak path.
type Client struct {
	curp     *curpclient.Client
	bound    weakpath.Binding
	sessions map[uint64]*session
	floors   weakpath.Floors
}

// session is what the client tracks of one session's weak writes.
type session struct {
	lastWeak uint64
	// writeSet holds the weak writes not yet known committed, by sequence
	// number, for the fast-path check and for re-sending.
	writeSet map[uint64]*wire.Request
}

var _ clientcore.Core = (*Client)(nil)

// New returns a CURP-HO client core bound to replica bound.
func New(cfg curpclient.Config, bound wire.NodeID) *Client {
	return &Client{curp: curpclient.New(cfg), bound: weakpath.NewBinding(bound),
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

// Submit implements clientcore.Core.
func (x *Client) Submit(sess uint64, op wire.Op) wire.OpID {
	p := x.curp.Start(sess, op)
	x.prepare(p)
	if p.Req.Op.Level == wire.Weak {
		x.sendWeak(p)
	} else {
		x.curp.SendStrong(p)
	}
	return p.Req.Op.ID
}

// prepare names the session's previous weak write in every request while
// it is not known committed, so the leader logs the request after it and
// the bound replica serves a read once it holds it. A committed one needs
// no naming: anything logged from now on lands after it, and the session's
// floor already covers its slot. Named anyway, it would hold the request
// back for good once the session had expired, as no replica would know it.
func (x *Client) prepare(p *curpclient.Pending) {
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

// sendWeak broadcasts a weak write (only the bound replica answers) and
// sends a weak read to the bound replica.
func (x *Client) sendWeak(p *curpclient.Pending) {
	op := &p.Req.Op
	if p.Req.Flags&wire.FlagRetry != 0 {
		x.bound.Missed(x.curp, x.curp.Replicas())
	}
	if !op.Kind.IsWrite() {
		p.Req.Flags |= wire.FlagReplyWanted
		x.floors.Stamp(&p.Req)
		p.Targets = []wire.NodeID{x.bound.Replica()}
		x.curp.Send(x.bound.Replica(), &p.Req)
		return
	}
	req := p.Req
	x.session(op.ID.Session).writeSet[op.ID.Seq] = &req
	// Re-sends are this client's (Tick): until the write is committed, not
	// just until the bound replica acknowledged it.
	p.Targets = nil
	x.broadcast(&req)
}

func (x *Client) broadcast(req *wire.Request) {
	bound := *req
	bound.Flags |= wire.FlagReplyWanted
	for _, r := range x.curp.Replicas() {
		if r == x.bound.Replica() {
			x.curp.Send(r, &bound)
		} else {
			x.curp.Send(r, req)
		}
	}
}

// Tick implements clientcore.Core: CURP's retries cover CURP-HO's weak
// operations too; the binding moves back to the closest replica once it
// answers again, and uncommitted weak writes are re-sent: a lost write must
// still reach the leader's log, and in session order.
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
	x.bound.Tick(x.curp)
	if x.curp.Now()%uint64(x.curp.RetryTicks()) != 0 {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(x.sessions)) {
		s := x.sessions[id]
		for _, seq := range slices.Sorted(maps.Keys(s.writeSet)) {
			retry := *s.writeSet[seq]
			x.curp.MarkRetry(&retry)
			x.broadcast(&retry)
		}
	}
}

// Step implements clientcore.Core. Replies to weak operations, and any
// reply to an operation no longer pending, are the weak path's: a weak
// write's commit may be heard of after it completed.
func (x *Client) Step(from wire.NodeID, m wire.Message) {
	rep, p := x.curp.Receive(from, m)
	switch {
	case rep == nil:
	case p == nil || p.Req.Op.Level == wire.Weak:
		x.weakReply(from, p, rep)
	default:
		out := x.curp.StepStrong(from, p, rep)
		if out.Done != nil {
			x.completed(p, out.Done)
		} else if out.Superquorum {
			x.tryFastPath(p)
		}
	}
}

// weakReply completes weak operations and clears committed weak writes; p
// is nil when the operation is no longer pending.
func (x *Client) weakReply(from wire.NodeID, p *curpclient.Pending, rep *wire.Reply) {
	s := x.sessions[rep.ID.Session]
	if s == nil {
		return
	}
	if req, ok := s.writeSet[rep.ID.Seq]; ok {
		x.writeReply(from, p, s, req, rep)
		return
	}
	if p == nil || p.Req.Op.Kind.IsWrite() || from != x.bound.Replica() || rep.Kind != wire.ReplyWeak {
		return
	}
	x.bound.Answered(from)
	if rep.Lost() {
		weakpath.Escalate(x.curp, p)
		return
	}
	x.floors.ObserveState(rep.ID.Session, rep.Applied)
	x.floors.Satisfied(rep.ID.Session, p.Req.ReadAfter)
	x.complete(p, rep, clientcore.PathWeak)
}

func (x *Client) writeReply(from wire.NodeID, p *curpclient.Pending, s *session, req *wire.Request, rep *wire.Reply) {
	committed := rep.Slot > 0 && (rep.Kind == wire.ReplyWeak || rep.Kind == wire.ReplySync)
	if committed {
		x.floors.ObserveCommitted(rep.ID, rep.Slot)
		delete(s.writeSet, rep.ID.Seq)
		if p == nil {
			x.curp.Release(rep.ID)
			return
		}
	} else if from != x.bound.Replica() || !rep.Ok || p == nil {
		return
	}
	x.bound.Answered(from)
	x.complete(p, &wire.Reply{Kind: wire.ReplyWeak, ID: rep.ID, Ok: true, Slot: rep.Slot}, clientcore.PathWeak)
	if !committed {
		// Acknowledged but not committed: keep replicas from forgetting it.
		x.curp.Hold(rep.ID)
	}
}

// tryFastPath completes a strong operation on the fast path once a
// superquorum answered and CURP-HO's conditions hold (whyNotFast), and
// notes why not otherwise.
func (x *Client) tryFastPath(p *curpclient.Pending) {
	if reason := x.whyNotFast(p); reason != clientcore.ReasonNone {
		x.curp.RejectFastPath(p, reason)
		return
	}
	x.completed(p, x.curp.CompleteFast(p))
}

// whyNotFast returns why the fast path fails, or ReasonNone. CURP-HO
// requires, besides CURP's superquorum, that the replies forming it hold,
// pooled or applied, every weak write the session issued before the
// operation and does not know committed, and for a read that they agree on
// the read dependency.
func (x *Client) whyNotFast(p *curpclient.Pending) clientcore.SlowReason {
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
		if !x.curp.Counts(p, w) {
			continue
		}
		if reason := check(w.Reply); reason == clientcore.ReasonNone {
			n++
		} else if why == clientcore.ReasonNone {
			why = reason
		}
	}
	if n >= x.curp.Superquorum() {
		return clientcore.ReasonNone
	}
	return why
}

func (x *Client) complete(p *curpclient.Pending, rep *wire.Reply, path clientcore.Path) {
	x.completed(p, x.curp.Complete(p, rep, path))
}

// completed raises the session's floor; a strong operation that completed
// through the log also proves the session's earlier weak writes committed,
// and those already acknowledged leave the write set. One still awaiting
// its acknowledgement (a pipelined session's strong operation may complete
// first) stays in flight until a reply completes it: released, it let
// replicas forget its result, so the leader no longer answered its
// resends; the next resend put it back in the write set, and acknowledged
// by the bound replica it was held there, re-sent for good without an
// answer, until its session expired and a resend took effect again.
func (x *Client) completed(p *curpclient.Pending, done *clientcore.Completion) {
	x.floors.ObserveCompletion(p, done)
	op := &p.Req.Op
	if op.Level == wire.Weak || done.Path == clientcore.PathFast {
		return
	}
	if s := x.sessions[op.ID.Session]; s != nil {
		for seq := range s.writeSet {
			id := wire.OpID{Session: op.ID.Session, Seq: seq}
			if seq < op.ID.Seq && !x.curp.Awaiting(id) {
				delete(s.writeSet, seq)
				x.curp.Release(id)
			}
		}
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
