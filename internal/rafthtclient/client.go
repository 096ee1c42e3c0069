package rafthtclient

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/raftclient"
	"github.com/hybridkv/hybridkv/internal/weakpath"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Client is the client core of one protocol of the family: the Raft
// baseline's client for strong operations and writes, and the weak reads
// its Policy describes.
type Client struct {
	policy  Policy
	raft    *raftclient.Client
	closest weakpath.Binding
	floors  weakpath.Floors
	caches  map[uint64]*cache
	reads   map[wire.OpID]*weakRead
	// ackTerms holds the term of the leader that answered a weak write
	// once it logged it, until the write's completion is observed.
	ackTerms map[wire.OpID]uint64
	// ignoreCache: see IgnoreCache.
	ignoreCache bool
	clientcore.Outbox
}

// weakRead is a weak read in flight.
type weakRead struct {
	req wire.Request
	age int
	// atLeader: a replica behind the read's floor refused it, and it went
	// to the leader (Policy.Redirect).
	atLeader bool
	// logged: the read goes through the leader's log, as a strong one,
	// because its floor names an entry the log replaced (see weakAnswer).
	logged bool
}

var _ clientcore.Core = (*Client)(nil)

// New returns a client core following policy; weak reads go to closest.
func New(policy Policy, replicas []wire.NodeID, closest wire.NodeID, retryTicks int) *Client {
	return &Client{policy: policy, raft: raftclient.New(replicas, retryTicks),
		closest: weakpath.NewBinding(closest), floors: make(weakpath.Floors),
		caches: make(map[uint64]*cache), reads: make(map[wire.OpID]*weakRead), ackTerms: make(map[wire.OpID]uint64)}
}

// IgnoreCache makes the client answer weak reads with the replica's answer
// alone, whatever its sessions wrote or read. It is a bug the checked
// simulation must catch in Raft-HT (package protocols' mutation tests).
func (c *Client) IgnoreCache() { c.ignoreCache = true }

// Submit implements clientcore.Core.
func (c *Client) Submit(sess uint64, op wire.Op) wire.OpID {
	if op.Level == wire.Weak && !op.Kind.IsWrite() {
		return c.startRead(sess, op)
	}
	if c.policy.StrongWrites {
		op.Level = wire.Strong
	}
	var flags wire.RequestFlags
	if c.policy.AckOnLog && op.Level == wire.Weak {
		flags |= wire.FlagAckOnLog
	}
	id := c.raft.SubmitFlagged(sess, op, flags)
	c.floors.Issued(id)
	c.drain()
	return id
}

func (c *Client) startRead(sess uint64, op wire.Op) wire.OpID {
	id, acked := c.raft.Start(sess)
	op.ID = id
	c.floors.Issued(id)
	r := &weakRead{req: wire.Request{Op: op, AckedBelow: acked}}
	if c.policy.Redirect {
		r.req.Flags |= wire.FlagServeNow
	}
	c.reads[id] = r
	c.sendRead(r)
	return id
}

// sendRead sends a weak read to the bound replica, or to the leader once
// redirected there (to every replica while no leader is known).
func (c *Client) sendRead(r *weakRead) {
	if c.policy.Floors && !r.logged {
		c.floors.Stamp(&r.req)
	}
	switch leader := c.raft.Leader(); {
	case !r.atLeader && !r.logged:
		c.Send(c.closest.Replica(), &r.req)
	case leader != 0:
		c.Send(leader, &r.req)
	default:
		for _, to := range c.raft.Replicas() {
			c.Send(to, &r.req)
		}
	}
}

// Step implements clientcore.Core.
func (c *Client) Step(from wire.NodeID, m wire.Message) {
	rep, ok := m.(*wire.Reply)
	if ok && rep.Kind == wire.ReplyWeak && rep.Ok && c.raft.Waiting(rep.ID) {
		c.ackTerms[rep.ID] = rep.Term // a weak write, answered once logged
	}
	c.raft.Step(from, m)
	c.drain()
	if !ok {
		return
	}
	r := c.reads[rep.ID]
	switch {
	case r == nil:
	case rep.Kind == wire.ReplyWeak && !r.logged:
		c.closest.Answered(from)
		c.weakAnswer(r, rep)
	case rep.Kind == wire.ReplySync && r.logged:
		c.finishRead(r, clientcore.Completion{ID: rep.ID, Op: r.req.Op, Found: rep.Found, Value: rep.Value,
			Revision: rep.Revision, Slot: rep.Slot, Path: clientcore.PathLog}, rep.Slot)
	}
}

// weakAnswer completes a weak read with a replica's answer, or sends it on.
func (c *Client) weakAnswer(r *weakRead, rep *wire.Reply) {
	op := &r.req.Op
	sess := op.ID.Session
	switch {
	case !rep.Ok && c.policy.Redirect && !r.atLeader:
		// Behind the floor (or past it with another entry): read at the
		// leader, waiting there.
		r.atLeader = true
		r.req.Flags &^= wire.FlagServeNow
		c.sendRead(r)
		return
	case !rep.Ok:
		// The floor names an entry another replaced: a weak write the
		// leader answered once it logged it, then lost. Only the log can
		// say what the session's past holds now: read through it, as a
		// strong read, which reflects everything that completed before.
		r.logged = true
		op.Level = wire.Strong
		r.req.MinApplied, r.req.SpecFloor, r.req.ReadAfter = 0, wire.Position{}, nil
		r.req.Flags = 0
		c.sendRead(r)
		return
	}
	done := clientcore.Completion{ID: op.ID, Op: *op, Found: rep.Found, Value: rep.Value,
		Revision: rep.Revision, Slot: rep.Slot, Path: clientcore.PathWeak}
	if c.policy.Cache {
		ca := c.cache(sess)
		if !ca.covers(rep.Applied) {
			// An older state than what the cache forgot: ask the leader,
			// which applies each committed entry first.
			r.atLeader = true
			c.sendRead(r)
			return
		}
		if op.Kind == wire.Scan {
			if !c.scanAnswer(ca, r, rep, &done) {
				r.atLeader = true
				c.sendRead(r)
				return
			}
		} else if v, ok := ca.lookup(op.Key); ok && v.asOf > rep.Applied && !c.ignoreCache {
			done.Found, done.Value, done.Revision, done.Slot = v.found, v.value, v.rev, v.slot
		} else {
			ca.learn(op.Key, cached{found: rep.Found, value: rep.Value, rev: rep.Revision, slot: rep.Slot, asOf: rep.Applied})
		}
		ca.prune(rep.Applied)
	}
	c.finishRead(r, done, rep.Applied)
}

// finishRead completes a weak read, whose answer reflects the log up to
// applied.
func (c *Client) finishRead(r *weakRead, done clientcore.Completion, applied uint64) {
	id := r.req.Op.ID
	c.floors.ObserveState(id.Session, applied)
	if r.logged {
		c.floors.ObserveCommitted(id, applied)
	}
	delete(c.reads, id)
	c.raft.End(id)
	c.Finish(done)
}

// drain takes what the Raft client produced: its messages as they are,
// its completions once the session's floor and cache learned from them.
func (c *Client) drain() {
	out, done := c.raft.Ready()
	for _, e := range out {
		c.Send(e.To, e.Msg)
	}
	for _, d := range done {
		term, acked := c.ackTerms[d.ID] // logged by the leader, maybe not committed
		delete(c.ackTerms, d.ID)
		d.Path = clientcore.PathLog
		if d.Op.Level == wire.Weak {
			d.Path = clientcore.PathWeak
		}
		if acked {
			// The session's reads wait for that very entry, or learn that
			// another replaced it (see weakAnswer).
			c.floors.ObserveSpeculative(d.ID.Session, wire.Position{Term: term, Index: d.Slot})
		} else {
			c.observe(&d)
		}
		c.Finish(d)
	}
	c.raft.Advance()
}

// observe raises the session's floor to the committed slot of an
// operation, and keeps in its cache what the operation wrote or read. (A
// write acknowledged once the leader logged it may yet be lost: it is not
// cached, so that no read returns a value the log may never hold.)
func (c *Client) observe(d *clientcore.Completion) {
	if d.Slot == 0 {
		return
	}
	c.floors.ObserveCommitted(d.ID, d.Slot)
	if !c.policy.Cache {
		return
	}
	ca := c.cache(d.ID.Session)
	switch d.Op.Kind {
	case wire.Put:
		ca.learn(d.Op.Key, cached{found: true, value: d.Op.Value, slot: d.Slot, asOf: d.Slot,
			rev: wire.Revision{Mod: d.Slot}})
	case wire.Delete:
		ca.learn(d.Op.Key, cached{slot: d.Slot, asOf: d.Slot})
	case wire.Get:
		var slot uint64
		if d.Found {
			slot = d.Revision.Mod
		}
		ca.learn(d.Op.Key, cached{found: d.Found, value: d.Value, rev: d.Revision, slot: slot, asOf: d.Slot})
	default: // a transaction: which keys it wrote is its program's and the state's
		ca.barrier(d.Slot)
	}
}

func (c *Client) cache(sess uint64) *cache {
	ca := c.caches[sess]
	if ca == nil {
		ca = newCache()
		c.caches[sess] = ca
	}
	return ca
}

// Tick implements clientcore.Core: the Raft client re-sends its own; a weak
// read unanswered for a retry period is sent again, to the next replica
// once the bound one has been silent too long, and weak reads move back to
// the closest replica once it answers again.
func (c *Client) Tick() {
	c.raft.Tick()
	c.drain()
	var due []*weakRead
	for _, r := range c.reads {
		r.age++
		if r.age >= c.raft.RetryTicks() {
			r.age = 0
			due = append(due, r)
		}
	}
	slices.SortFunc(due, func(a, b *weakRead) int { return a.req.Op.ID.Compare(b.req.Op.ID) })
	for _, r := range due {
		r.req.Flags |= wire.FlagRetry
		if !r.atLeader {
			c.closest.Missed(c.raft, c.raft.Replicas())
		}
		c.sendRead(r)
	}
	c.closest.Tick(c.raft)
}

// Cancel implements clientcore.Core.
func (c *Client) Cancel(id wire.OpID) {
	if _, ok := c.reads[id]; ok {
		delete(c.reads, id)
		c.raft.End(id)
		return
	}
	c.raft.Cancel(id)
}

// Leader implements clientcore.Core.
func (c *Client) Leader() wire.NodeID { return c.raft.Leader() }
