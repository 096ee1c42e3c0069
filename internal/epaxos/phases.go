package epaxos

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

type phase uint8

const (
	phasePreAccept phase = iota + 1
	phaseAccept
	phasePrepare
)

// coordinator is what a replica driving an instance keeps: the phase it
// runs, at which ballot, and the replies so far.
type coordinator struct {
	phase   phase
	ballot  uint64
	replies map[wire.NodeID]*wire.EPaxos
	// since is the tick the phase last sent its message.
	since uint64
	// msg is the phase's message, sent again to those that did not reply.
	msg *wire.EPaxos
}

func (r *Replica) start(inst *instance, p phase, b uint64, msg *wire.EPaxos, self *wire.EPaxos, afterWrite bool) {
	inst.coord = &coordinator{phase: p, ballot: b, replies: make(map[wire.NodeID]*wire.EPaxos), since: r.now, msg: msg}
	for _, to := range r.others() {
		if afterWrite {
			r.sendAfter(to, msg)
		} else {
			r.send(to, msg)
		}
	}
	// The replica's own vote counts once what it stands on is durable.
	r.sendAfter(r.id, self)
}

// propose opens an instance of this replica's row for c, which follows
// the instances in after besides those it conflicts with.
func (r *Replica) propose(c wire.Command, after []wire.Instance) {
	afterWrite := false
	if r.nextNum >= r.reserved {
		// Numbers go out before the record that holds them is durable,
		// so a restart must not hand them out again: they are reserved
		// a block at a time, and a new block's first instance waits.
		r.reserved = r.nextNum + reserveBlock
		r.records.reserve(r.reserved)
		afterWrite = true
	}
	id := wire.Instance{Replica: r.id, Num: r.nextNum}
	r.nextNum++
	inst := r.get(id)
	deps := union(r.deps(id, &c), instanceSet(after, id))
	r.setCommand(inst, c)
	inst.status, inst.bal, inst.vbal, inst.agreed, inst.deps = wire.EPreAccepted, 0, 0, true, deps
	for i := range c.Ops {
		r.proposed[c.Ops[i].ID] = id
	}
	r.records.instance(inst)
	r.ackWeakWrites(inst)
	msg := &wire.EPaxos{Kind: wire.EPreAccept, Instance: id, Command: c, Deps: deps}
	self := &wire.EPaxos{Kind: wire.EPreAcceptReply, Instance: id, Ok: true, Deps: deps, Agreed: true}
	r.start(inst, phasePreAccept, 0, msg, self, afterWrite)
}

// reserveBlock is how many instance numbers one reservation record
// covers.
const reserveBlock = 64

// setCommand replaces the instance's command, keeping the conflict index
// and the proposals this replica waits for in step.
func (r *Replica) setCommand(inst *instance, c wire.Command) {
	if inst.indexed {
		r.conf.remove(inst.id, &inst.cmd, false)
		inst.indexed = false
	}
	if c.Noop {
		// Operations this replica proposed in the instance are lost: a
		// retry proposes them again, and this replica at once the weak
		// writes it acknowledged (see reproposeLost).
		var lost []*wire.Request
		for i := range inst.cmd.Ops {
			op := &inst.cmd.Ops[i]
			if r.proposed[op.ID] != inst.id {
				continue
			}
			delete(r.proposed, op.ID)
			if _, acked := r.notify[op.ID]; acked && !broken.noOverwrites {
				lost = append(lost, &wire.Request{Op: *op, AckedBelow: inst.cmd.AckedBelow[i]})
			}
		}
		r.reproposeLost(lost)
	}
	inst.cmd = c
	if inst.status < wire.EExecutedStatus && !c.Noop {
		r.conf.add(inst.id, &inst.cmd)
		inst.indexed = true
	}
}

func reply(kind wire.EPaxosKind, m *wire.EPaxos) *wire.EPaxos {
	return &wire.EPaxos{Kind: kind, Instance: m.Instance, Ballot: m.Ballot, Ok: true}
}

func replyKind(k wire.EPaxosKind) wire.EPaxosKind {
	switch k {
	case wire.EPreAccept:
		return wire.EPreAcceptReply
	case wire.EAccept:
		return wire.EAcceptReply
	}
	return wire.EPrepareReply
}

func (r *Replica) refuse(to wire.NodeID, m *wire.EPaxos, promised uint64) {
	r.send(to, &wire.EPaxos{Kind: replyKind(m.Kind), Instance: m.Instance, Ballot: m.Ballot, Promised: promised})
}

// committedTo tells a coordinator the instance is decided.
func (r *Replica) committedTo(to wire.NodeID, inst *instance) {
	r.send(to, &wire.EPaxos{Kind: wire.ECommit, Instance: inst.id, Command: inst.cmd, Deps: inst.deps})
}

func (r *Replica) onPreAccept(from wire.NodeID, m *wire.EPaxos) {
	inst := r.get(m.Instance)
	switch {
	case inst.status >= wire.ECommitted:
		r.committedTo(from, inst)
		return
	case m.Ballot < inst.bal:
		r.refuse(from, m, inst.bal)
		return
	case inst.status == wire.EAccepted && inst.vbal == m.Ballot:
		return // this ballot moved on to its accept phase
	case inst.status == wire.EPreAccepted && inst.vbal == m.Ballot && inst.bal == m.Ballot:
		// Sent again: the same answer, for a replica never gives two
		// at one ballot.
		rep := reply(wire.EPreAcceptReply, m)
		rep.Deps, rep.Agreed = inst.deps, inst.agreed
		r.sendAfter(from, rep)
		return
	}
	local := r.deps(inst.id, &m.Command)
	deps := union(m.Deps, local)
	inst.bal, inst.vbal, inst.status = m.Ballot, m.Ballot, wire.EPreAccepted
	inst.agreed = m.Ballot == 0 && (subset(local, m.Deps) || broken.alwaysAgreed)
	r.setCommand(inst, m.Command)
	inst.deps = deps
	r.records.instance(inst)
	r.learned(inst)
	rep := reply(wire.EPreAcceptReply, m)
	rep.Deps, rep.Agreed = deps, inst.agreed
	r.sendAfter(from, rep)
}

func (r *Replica) onAccept(from wire.NodeID, m *wire.EPaxos) {
	inst := r.get(m.Instance)
	switch {
	case inst.status >= wire.ECommitted:
		r.committedTo(from, inst)
		return
	case m.Ballot < inst.bal:
		r.refuse(from, m, inst.bal)
		return
	}
	inst.bal, inst.vbal, inst.status, inst.agreed = m.Ballot, m.Ballot, wire.EAccepted, false
	r.setCommand(inst, m.Command)
	inst.deps = m.Deps
	r.records.instance(inst)
	r.learned(inst)
	r.sendAfter(from, reply(wire.EAcceptReply, m))
}

func (r *Replica) onPrepare(from wire.NodeID, m *wire.EPaxos) {
	inst := r.get(m.Instance)
	switch {
	case inst.status >= wire.ECommitted:
		r.committedTo(from, inst)
		return
	case m.Ballot < inst.bal || m.Ballot == inst.bal && wire.NodeID(m.Ballot&0xff) != from:
		r.refuse(from, m, inst.bal)
		return
	}
	r.learned(inst)
	if m.Ballot > inst.bal {
		inst.bal = m.Ballot
		if broken.oneBallot {
			inst.vbal = m.Ballot
		}
		r.records.instance(inst)
	}
	r.sendAfter(from, r.state(m))
}

// state is this replica's prepare reply: what it holds of the instance;
// of one it holds nothing of, the weak writes clients said it holds
// (see noteFragment).
func (r *Replica) state(m *wire.EPaxos) *wire.EPaxos {
	inst := r.instances[m.Instance]
	rep := reply(wire.EPrepareReply, m)
	rep.Status, rep.AcceptedBallot, rep.Agreed, rep.Command, rep.Deps = inst.status, inst.vbal, inst.agreed, inst.cmd, inst.deps
	if inst.status == wire.EUnknown {
		rep.Command = wire.Command{Ops: r.fragments[inst.id]}
	}
	return rep
}

func (r *Replica) onReply(from wire.NodeID, m *wire.EPaxos) {
	inst := r.instances[m.Instance]
	if inst == nil || inst.coord == nil || inst.coord.ballot != m.Ballot {
		return
	}
	c := inst.coord
	want := map[phase]wire.EPaxosKind{phasePreAccept: wire.EPreAcceptReply, phaseAccept: wire.EAcceptReply, phasePrepare: wire.EPrepareReply}[c.phase]
	if m.Kind != want {
		return
	}
	if !m.Ok {
		if m.Promised > c.ballot {
			r.abandon(inst)
		}
		return
	}
	c.replies[from] = m
	switch c.phase {
	case phasePreAccept:
		r.preAcceptProgress(inst, false)
	case phaseAccept:
		if len(c.replies) >= r.majority() {
			if c.ballot == 0 {
				r.stats.slow++
			}
			r.commitAndTell(inst, inst.cmd, inst.deps)
		}
	case phasePrepare:
		if len(c.replies) >= r.majority() {
			r.decide(inst)
		}
	}
}

// abandon stops driving an instance another replica took over at a
// higher ballot; if it stays uncommitted, recovery takes it up later.
func (r *Replica) abandon(inst *instance) {
	inst.coord = nil
	r.needed(inst)
}

// preAcceptProgress decides what a pre-accept phase's replies allow: the
// fast path at ballot 0 once n−1 replicas agreed; else, with a majority's
// replies, once agreement can no longer come or the wait is over, the
// accept phase on the union of their dependencies.
func (r *Replica) preAcceptProgress(inst *instance, timedOut bool) {
	c := inst.coord
	got := len(c.replies)
	if c.ballot == 0 {
		agreed := 0
		for _, rep := range c.replies {
			if rep.Agreed {
				agreed++
			}
		}
		if agreed >= r.fastQuorum() {
			r.stats.fast++
			inst.fast = true
			r.commitAndTell(inst, inst.cmd, c.msg.Deps)
			return
		}
		if got < r.majority() || got-agreed <= r.n-r.fastQuorum() && !timedOut {
			return
		}
	} else if got < r.majority() {
		return
	}
	var deps []wire.Instance
	for _, rep := range c.replies {
		deps = union(deps, rep.Deps)
	}
	r.accept(inst, c.ballot, inst.cmd, deps)
}

// accept starts an accept phase at ballot b.
func (r *Replica) accept(inst *instance, b uint64, cmd wire.Command, deps []wire.Instance) {
	inst.bal, inst.vbal, inst.status, inst.agreed = b, b, wire.EAccepted, false
	r.setCommand(inst, cmd)
	inst.deps = deps
	r.records.instance(inst)
	msg := &wire.EPaxos{Kind: wire.EAccept, Instance: inst.id, Ballot: b, Command: cmd, Deps: deps}
	r.start(inst, phaseAccept, b, msg, reply(wire.EAcceptReply, msg), false)
}

// commitAndTell commits the instance and tells every other replica.
func (r *Replica) commitAndTell(inst *instance, cmd wire.Command, deps []wire.Instance) {
	r.commit(inst, cmd, deps)
	if broken.replyAtCommit {
		r.replyWrites(inst)
	}
	msg := &wire.EPaxos{Kind: wire.ECommit, Instance: inst.id, Command: cmd, Deps: deps}
	for _, to := range r.others() {
		r.send(to, msg)
	}
}

// commit records the instance's final command and dependencies and hands
// it to the executor.
func (r *Replica) commit(inst *instance, cmd wire.Command, deps []wire.Instance) {
	if inst.status >= wire.ECommitted {
		return
	}
	inst.status = wire.ECommitted
	inst.committedAt = r.now
	r.setCommand(inst, cmd)
	inst.deps = deps
	inst.coord = nil
	delete(r.uncommitted, inst.id)
	delete(r.fragments, inst.id)
	if cmd.Noop {
		r.stats.noops++
	}
	r.records.instance(inst)
	r.exec.committed(inst.id)
}

// tickCoordinators sends each phase's message again to the replicas that
// have not answered it, and lets a command leader that waited long
// enough for agreement take the slow path.
func (r *Replica) tickCoordinators() {
	for _, inst := range r.sortedUncommitted() {
		c := inst.coord
		if c == nil || r.now-c.since < r.resendTicks {
			continue
		}
		if c.phase == phasePreAccept {
			r.preAcceptProgress(inst, true)
			if inst.coord != c {
				continue
			}
		}
		c.since = r.now
		for _, to := range r.others() {
			if _, ok := c.replies[to]; !ok {
				r.send(to, c.msg)
			}
		}
	}
}

// replyWrites answers the writes of a committed instance before it
// executes: only the replyAtCommit mutation does.
func (r *Replica) replyWrites(inst *instance) {
	for i := range inst.cmd.Ops {
		op := &inst.cmd.Ops[i]
		if to, ok := r.waiting[op.ID]; ok && (op.Kind == wire.Put || op.Kind == wire.Delete) {
			delete(r.waiting, op.ID)
			r.send(to, &wire.Reply{Kind: wire.ReplySync, ID: op.ID, Ok: inst.fast})
		}
	}
}

// deps is the dependencies this replica knows for a command.
func (r *Replica) deps(id wire.Instance, c *wire.Command) []wire.Instance {
	return r.conf.deps(id, c, func(p wire.Instance) bool {
		inst := r.instances[p]
		return inst != nil && inst.status >= wire.ECommitted
	})
}

// instanceSet sorts a list of instances, without duplicates or self.
func instanceSet(is []wire.Instance, self wire.Instance) []wire.Instance {
	if len(is) == 0 {
		return nil
	}
	out := slices.Clone(is)
	sortInstances(out)
	out = slices.Compact(out)
	if i := slices.Index(out, self); i >= 0 {
		out = slices.Delete(out, i, i+1)
	}
	return out
}
