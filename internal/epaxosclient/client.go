// Package epaxosclient is the client core of EPaxos and of EPaxos-HO.
// Every operation goes to the client's closest replica first, which
// leads its instance and answers once it executed it; an unanswered
// operation goes to the next replica.
//
// With the weak path (EPaxos-HO) the closest replica also answers weak
// writes once it recorded them and weak reads from its state; a weak
// operation left unanswered goes to the next replica as a strong one,
// which is at least as strong. Every request names, for each replica's
// row, the latest instance of the session's operations that completed
// (wire.Request.After): a strong operation follows them wherever it runs,
// and a weak read waits until they executed where it is answered.
//
// A session's later operations follow what it read, too: a weak read's
// answer names the write it returned (Slot; the keys' Mod for a scan),
// which joins After until an operation of the session that follows it
// completes in an instance of its own, which stands for it from then on.
//
// An acknowledged weak write stays *unconfirmed* until the client hears
// it executed: the replica says so, or a strong operation that carried it
// (wire.Request.Writes) completes, or, when neither comes, the client sends
// it again as a strong operation. Until then it stays counted in the
// session's AckedBelow, so no replica takes a copy of it for one it has
// forgotten. Every request that carries such writes names where each was
// acknowledged (wire.Request.WriteSlots; a strong re-send, marked
// wire.FlagReissue, its AckedAt): should that instance be lost with its
// replica, recovery puts the writes back in it (see the epaxos package's
// decide), in their place in their session's order.
package epaxosclient

import (
	"maps"
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
	weakPath   bool
	sessions   *sessions.Table
	pending    map[wire.OpID]*pending
	// after holds, per session, the latest completed instance of each
	// row (with the weak path).
	after map[uint64]map[wire.NodeID]uint64
	// unconfirmed holds the acknowledged weak writes not known executed.
	unconfirmed map[wire.OpID]*pending
	// observed holds, per session, the writes its reads returned that no
	// completed operation of the session follows yet.
	observed map[uint64][]wire.Instance
	clientcore.Outbox
}

type pending struct {
	// op is the operation as submitted; req what goes on the wire.
	op  wire.Op
	req wire.Request
	age int
	// tries counts the sends, the first included: each retry goes to the
	// next replica.
	tries int
	// carried are the unconfirmed weak writes the request carries;
	// observed the session's observed writes its After names.
	carried  []wire.OpID
	observed []wire.Instance
	// ackedAt is, for an acknowledged weak write, the slot its replica
	// acknowledged it at.
	ackedAt uint64
}

// New builds a client core whose operations go to closest first; with
// weakPath, it takes EPaxos-HO's weak path.
func New(replicas []wire.NodeID, closest wire.NodeID, retryTicks int, weakPath bool) *Client {
	i := max(slices.Index(replicas, closest), 0)
	return &Client{replicas: replicas, closest: i, retryTicks: max(1, retryTicks), weakPath: weakPath,
		sessions: sessions.New(), pending: make(map[wire.OpID]*pending), after: make(map[uint64]map[wire.NodeID]uint64),
		unconfirmed: make(map[wire.OpID]*pending), observed: make(map[uint64][]wire.Instance)}
}

// Submit implements clientcore.Core.
func (c *Client) Submit(sess uint64, op wire.Op) wire.OpID {
	op.ID = c.sessions.Start(sess)
	p := &pending{op: op, req: wire.Request{Op: op, AckedBelow: c.sessions.AckedBelow(sess)}}
	if !c.weakPath {
		p.req.Op.Level = wire.Strong
	}
	c.pending[op.ID] = p
	c.send(p)
	return op.ID
}

func (c *Client) send(p *pending) {
	if c.weakPath {
		sess := p.req.Op.ID.Session
		p.observed = append(p.observed[:0], c.observed[sess]...)
		p.req.After = append(c.afterOf(sess), p.observed...)
		if p.req.Op.Level == wire.Strong {
			c.carry(p)
		}
	}
	to := c.replicas[(c.closest+p.tries)%len(c.replicas)]
	p.tries++
	c.Send(to, &p.req)
}

// carry puts the session's unconfirmed weak writes issued before p in its
// request.
func (c *Client) carry(p *pending) {
	p.req.Writes, p.req.WriteSlots, p.carried = p.req.Writes[:0], p.req.WriteSlots[:0], p.carried[:0]
	id := p.req.Op.ID
	for _, w := range c.unconfirmed {
		if w.op.ID.Session == id.Session && w.op.ID.Seq < id.Seq {
			p.req.Writes = append(p.req.Writes, w.op)
		}
	}
	slices.SortFunc(p.req.Writes, func(a, b wire.Op) int { return a.ID.Compare(b.ID) })
	for i := range p.req.Writes {
		p.carried = append(p.carried, p.req.Writes[i].ID)
		p.req.WriteSlots = append(p.req.WriteSlots, c.unconfirmed[p.req.Writes[i].ID].ackedAt)
	}
	if len(p.req.Writes) == 0 {
		p.req.WriteSlots = nil
	}
}

// confirm ends an unconfirmed weak write: it executed.
func (c *Client) confirm(id wire.OpID) {
	if _, ok := c.unconfirmed[id]; ok {
		delete(c.unconfirmed, id)
		c.sessions.Finish(id)
	}
}

// afterOf lists the session's latest completed instance of each row.
func (c *Client) afterOf(sess uint64) []wire.Instance {
	rows := c.after[sess]
	if len(rows) == 0 {
		return nil
	}
	out := make([]wire.Instance, 0, len(rows))
	for _, r := range slices.Sorted(maps.Keys(rows)) {
		out = append(out, wire.Instance{Replica: r, Num: rows[r]})
	}
	return out
}

// completed notes what a reply names: the operation's own instance, which
// follows every write the request named as observed (a weak write's
// acknowledgement, a strong result); or the writes a weak read returned.
func (c *Client) completed(p *pending, rep *wire.Reply) {
	if !c.weakPath {
		return
	}
	sess := rep.ID.Session
	if rep.Kind == wire.ReplyWeak && !p.op.Kind.IsWrite() {
		c.observe(sess, rep.Slot)
		if p.op.Kind == wire.Scan && rep.Found {
			if res, err := wire.DecodeTxnResult(rep.Value); err == nil && len(res.Results) == 1 {
				for _, kv := range res.Results[0].KVs {
					c.observe(sess, kv.Mod)
				}
			}
		}
		return
	}
	if rep.Slot == 0 {
		return
	}
	c.learn(sess, rep.Slot)
	if len(p.observed) > 0 {
		c.observed[sess] = slices.DeleteFunc(c.observed[sess], func(i wire.Instance) bool { return slices.Contains(p.observed, i) })
	}
}

// observe adds the write a read returned (its slot) to the session's
// observed ones.
func (c *Client) observe(sess, slot uint64) {
	if slot == 0 {
		return
	}
	id := wire.SlotInstance(slot)
	if !slices.Contains(c.observed[sess], id) {
		c.observed[sess] = append(c.observed[sess], id)
	}
}

// learn notes the instance of an operation of the session (its Slot; see
// wire.Instance.Slot).
func (c *Client) learn(sess, slot uint64) {
	inst := wire.SlotInstance(slot)
	row, num := inst.Replica, inst.Num
	rows := c.after[sess]
	if rows == nil {
		rows = make(map[wire.NodeID]uint64)
		c.after[sess] = rows
	}
	rows[row] = max(rows[row], num)
}

// Cancel implements clientcore.Core.
func (c *Client) Cancel(id wire.OpID) {
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		c.sessions.Finish(id)
	}
}

// Step implements clientcore.Core: a replica answers once it executed the
// operation (Ok: its instance committed on the fast path), or, on the
// weak path, a weak write once recorded and a weak read from its state.
func (c *Client) Step(_ wire.NodeID, m wire.Message) {
	rep, ok := m.(*wire.Reply)
	if !ok || rep.Kind != wire.ReplySync && rep.Kind != wire.ReplyWeak {
		return
	}
	if _, ok := c.unconfirmed[rep.ID]; ok && (rep.Kind == wire.ReplySync || rep.Applied != 0) {
		c.confirm(rep.ID)
		return
	}
	p := c.pending[rep.ID]
	if p == nil || rep.Kind == wire.ReplyWeak && p.req.Op.Level != wire.Weak {
		return
	}
	delete(c.pending, rep.ID)
	c.completed(p, rep)
	if rep.Kind == wire.ReplyWeak && p.op.Kind.IsWrite() && rep.Applied == 0 {
		p.age, p.req.Op.Level, p.ackedAt = 0, wire.Strong, rep.Slot
		c.unconfirmed[rep.ID] = p
	} else {
		c.sessions.Finish(rep.ID)
	}
	for _, id := range p.carried {
		c.confirm(id)
	}
	path := clientcore.PathSlow
	switch {
	case rep.Kind == wire.ReplyWeak:
		path = clientcore.PathWeak
	case rep.Ok:
		path = clientcore.PathFast
	}
	// No slot: EPaxos has no log whose positions the checker could
	// compare.
	c.Finish(clientcore.Completion{ID: rep.ID, Op: p.op,
		Found: rep.Found, Value: rep.Value, Revision: rep.Revision, Path: path})
}

// Tick implements clientcore.Core: unanswered operations go to the next
// replica, a weak one as strong, in identity order so a simulated run
// does not depend on map order.
func (c *Client) Tick() {
	var due []*pending
	for _, p := range c.pending {
		p.age++
		if p.age >= c.retryTicks {
			p.age = 0
			due = append(due, p)
		}
	}
	// An unconfirmed weak write goes again, as strong, after a longer
	// wait: its replica's word that it executed is lost with a restart.
	for _, p := range c.unconfirmed {
		p.age++
		if p.age >= 4*c.retryTicks {
			p.age = 0
			due = append(due, p)
		}
	}
	slices.SortFunc(due, func(a, b *pending) int { return a.req.Op.ID.Compare(b.req.Op.ID) })
	for _, p := range due {
		p.req.Op.Level = wire.Strong
		p.req.Flags |= wire.FlagRetry
		if _, ok := c.unconfirmed[p.req.Op.ID]; ok {
			// Acknowledged once, at AckedAt: a replica recovering
			// that instance can put it back there.
			p.req.Flags |= wire.FlagReissue
			p.req.AckedAt = p.ackedAt
		}
		p.req.AckedBelow = c.sessions.AckedBelow(p.req.Op.ID.Session)
		c.send(p)
	}
}

// Leader implements clientcore.Core: there is none.
func (c *Client) Leader() wire.NodeID { return 0 }
