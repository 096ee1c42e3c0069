package curp

import (
	"cmp"
	"slices"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// ClientConfig builds a client core.
type ClientConfig struct {
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

	sessions map[uint64]*session
	pending  map[wire.OpID]*pending

	out  []wire.Envelope
	done []protocol.Completion
}

type session struct {
	next     uint64
	inflight []uint64 // sequence numbers in flight, ascending
}

// ackedBelow is the lowest sequence number the session still waits for.
func (s *session) ackedBelow() uint64 {
	if len(s.inflight) == 0 {
		return s.next
	}
	return s.inflight[0]
}

func (s *session) finish(seq uint64) {
	if i, ok := slices.BinarySearch(s.inflight, seq); ok {
		s.inflight = slices.Delete(s.inflight, i, i+1)
	}
}

type pending struct {
	req  wire.Request
	age  int
	spec *wire.Reply // the leader's ok speculative reply
	// specFrom is the replica that sent spec.
	specFrom wire.NodeID
	// witnesses holds the replicas that recorded the operation.
	witnesses []wire.NodeID
	// refused is set once the leader or a witness said not ok.
	refused bool
}

// NewClient builds a CURP client core.
func NewClient(cfg ClientConfig) *Client {
	n := len(cfg.Replicas)
	f := (n - 1) / 2
	return &Client{
		id:          cfg.ID,
		replicas:    cfg.Replicas,
		superquorum: Superquorum(n),
		retryTicks:  max(1, cfg.RetryTicks),
		sessions:    make(map[uint64]*session),
		pending:     make(map[wire.OpID]*pending, 64*(f+1)),
	}
}

// Superquorum is CURP's fast-path quorum for n = 2f+1 replicas:
// f + ⌈f/2⌉ + 1.
func Superquorum(n int) int {
	f := (n - 1) / 2
	return f + (f+1)/2 + 1
}

// Submit implements protocol.Client.
func (c *Client) Submit(sess uint64, op wire.Op) wire.OpID {
	s := c.sessions[sess]
	if s == nil {
		s = &session{next: 1}
		c.sessions[sess] = s
	}
	op.ID = wire.OpID{Session: sess, Seq: s.next}
	s.next++
	s.inflight = append(s.inflight, op.ID.Seq)
	p := &pending{req: wire.Request{Op: op, AckedBelow: s.ackedBelow()}}
	c.pending[op.ID] = p
	c.broadcast(&p.req)
	return op.ID
}

func (c *Client) broadcast(req *wire.Request) {
	for _, r := range c.replicas {
		c.out = append(c.out, wire.Envelope{To: r, Msg: req})
	}
}

// Cancel implements protocol.Client.
func (c *Client) Cancel(id wire.OpID) {
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		c.sessions[id.Session].finish(id.Seq)
	}
}

// Tick implements protocol.Client. Due retries go out in identity order so
// that a simulated run does not depend on map iteration order.
func (c *Client) Tick() {
	var due []*pending
	for _, p := range c.pending {
		p.age++
		if p.age >= c.retryTicks {
			p.age = 0
			due = append(due, p)
		}
	}
	slices.SortFunc(due, func(a, b *pending) int { return compareOpID(a.req.Op.ID, b.req.Op.ID) })
	for _, p := range due {
		retry := p.req
		retry.Flags |= wire.FlagRetry
		retry.AckedBelow = c.sessions[retry.Op.ID.Session].ackedBelow()
		c.broadcast(&retry)
	}
}

// Step implements protocol.Client.
func (c *Client) Step(from wire.NodeID, m wire.Message) {
	rep, ok := m.(*wire.Reply)
	if !ok {
		return
	}
	c.learnLeader(rep)
	p := c.pending[rep.ID]
	if p == nil {
		return
	}
	switch rep.Kind {
	case wire.ReplySync:
		path := protocol.PathCommitted
		if p.refused {
			path = protocol.PathSlow
		}
		c.complete(p, rep, path)
	case wire.ReplySpeculative:
		if rep.Ok && from == rep.Leader {
			p.spec, p.specFrom = rep, from
		}
		p.refused = p.refused || !rep.Ok
		c.tryFastPath(p)
	case wire.ReplyWitness:
		if rep.Ok && !slices.Contains(p.witnesses, from) {
			p.witnesses = append(p.witnesses, from)
		}
		p.refused = p.refused || !rep.Ok
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
func (c *Client) tryFastPath(p *pending) {
	if p.spec == nil {
		return
	}
	n := 1
	for _, w := range p.witnesses {
		if w != p.specFrom {
			n++
		}
	}
	if n >= c.superquorum {
		c.complete(p, p.spec, protocol.PathFast)
	}
}

func (c *Client) complete(p *pending, rep *wire.Reply, path protocol.Path) {
	id := p.req.Op.ID
	delete(c.pending, id)
	c.sessions[id.Session].finish(id.Seq)
	c.done = append(c.done, protocol.Completion{
		ID: id, Found: rep.Found, Value: rep.Value, Slot: rep.Slot, Path: path,
	})
}

// Ready implements protocol.Client.
func (c *Client) Ready() ([]wire.Envelope, []protocol.Completion) { return c.out, c.done }

// Advance implements protocol.Client.
func (c *Client) Advance() {
	clear(c.out)
	c.out = c.out[:0]
	clear(c.done)
	c.done = c.done[:0]
}

// Pending returns the number of operations in flight.
func (c *Client) Pending() int { return len(c.pending) }

func compareOpID(a, b wire.OpID) int {
	if c := cmp.Compare(a.Session, b.Session); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq, b.Seq)
}
