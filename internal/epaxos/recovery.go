package epaxos

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Recovery: a replica that needs an instance committed and sees no commit
// coming takes it over at a higher ballot; decide makes the choice the
// package documentation argues for.

// needed marks an uncommitted instance this replica waits for: unless it
// commits first, recovery starts after a timeout drawn from the seed, so
// that replicas waiting for the same instance seldom duel.
func (r *Replica) needed(inst *instance) { r.recoverAfter(inst, r.recoverTicks) }

// learned marks an instance this replica took part in: if no commit
// reaches it (a lost message, a command leader gone), it recovers the
// instance itself, later than one it waits for, so that every replica
// ends up executing every command.
func (r *Replica) learned(inst *instance) { r.recoverAfter(inst, 3*r.recoverTicks) }

func (r *Replica) recoverAfter(inst *instance, ticks uint64) {
	if inst.status >= wire.ECommitted || inst.recoverAt != 0 {
		return
	}
	inst.recoverAt = r.now + ticks + r.rand.Uint64N(r.recoverTicks)
}

// recover starts recovery of an instance at a ballot above any this
// replica promised: its own promise is durable before the prepare goes
// out, so that no restart hands out the same ballot twice.
func (r *Replica) recover(inst *instance) {
	r.stats.recoveries++
	b := nextBallot(inst.bal, r.id)
	inst.bal = b
	inst.recoverAt = 0
	r.records.instance(inst)
	msg := &wire.EPaxos{Kind: wire.EPrepare, Instance: inst.id, Ballot: b}
	r.start(inst, phasePrepare, b, msg, r.state(msg), true)
}

// decide takes a majority's prepare replies to the next phase (see the
// package documentation for why each choice is safe).
func (r *Replica) decide(inst *instance) {
	c := inst.coord
	var best, anyCmd *wire.EPaxos
	var agreed []*wire.EPaxos
	var fragments []wire.Op
	for _, from := range r.peers {
		rep := c.replies[from]
		if rep == nil {
			continue
		}
		switch rep.Status {
		case wire.EUnknown:
			fragments = mergeFragments(fragments, rep.Command.Ops)
		case wire.ECommitted, wire.EExecutedStatus:
			r.commitAndTell(inst, rep.Command, rep.Deps)
			return
		case wire.EAccepted:
			if best == nil || rep.AcceptedBallot > best.AcceptedBallot {
				best = rep
			}
		case wire.EPreAccepted:
			// The command leader's own, pre-accepted at ballot 0, over
			// one a recovery proposed from clients' word (a part).
			if anyCmd == nil || rep.AcceptedBallot < anyCmd.AcceptedBallot {
				anyCmd = rep
			}
			if broken.recoveryTakesAnyPreAccept && rep.AcceptedBallot == 0 {
				r.accept(inst, c.ballot, rep.Command, rep.Deps)
				return
			}
			if from != inst.id.Replica && rep.AcceptedBallot == 0 && rep.Agreed && !broken.recoveryIgnoresAgreement {
				agreed = append(agreed, rep)
			}
		}
	}
	switch {
	case best != nil:
		r.accept(inst, c.ballot, best.Command, best.Deps)
	case len(agreed) >= r.n/2:
		r.accept(inst, c.ballot, agreed[0].Command, agreed[0].Deps)
	case anyCmd != nil:
		// Dependencies a replica pre-accepted stay, at whatever ballot:
		// more never breaks the ordering, and they hold those the
		// command leader added to follow its session's weak writes, and
		// those a recovery from clients' word added to follow the
		// instances before it in its row (see unknownBelow).
		var initial []wire.Instance
		for _, rep := range c.replies {
			if rep.Status == wire.EPreAccepted {
				initial = union(initial, rep.Deps)
			}
		}
		r.preAcceptAgain(inst, c.ballot, anyCmd.Command, initial)
	case len(fragments) > 0 && !broken.noFragments:
		// Nothing can have committed at a lower ballot, so any command
		// may: the weak writes clients said the instance held take the
		// place they were acknowledged in, before what their sessions
		// did next in the same row, rather than being lost.
		r.stats.fragments++
		r.preAcceptAgain(inst, c.ballot, wire.Command{Ops: fragments, AckedBelow: make([]uint64, len(fragments))}, r.unknownBelow(inst.id))
	default:
		r.accept(inst, c.ballot, wire.Command{Noop: true}, nil)
	}
}

// unknownBelow lists the instances of id's row before it that this
// replica has not executed and holds no command of. Writes recovered from
// clients' word follow them: one may hold an earlier write of the same
// session, acknowledged by the same cut-off replica, that none of the
// recovery's quorum knows either, and the dependency the row's replica
// would have given it would otherwise be missing.
func (r *Replica) unknownBelow(id wire.Instance) []wire.Instance {
	var out []wire.Instance
	for n := max(r.gc.mine[id.Replica], r.gc.dropped[id.Replica]) + 1; n < id.Num; n++ {
		below := wire.Instance{Replica: id.Replica, Num: n}
		if inst := r.instances[below]; inst == nil || inst.status == wire.EUnknown {
			out = append(out, below)
		}
	}
	return out
}

// noteFragment records a weak write a client says was acknowledged at
// slot (wire.Request.WriteSlots, AckedAt), unless this replica holds that
// instance's command: should the instance's replica be cut off before any
// other received it, recovery here, or at a replica this one answers,
// proposes such writes in it rather than a no-op (see decide).
func (r *Replica) noteFragment(op wire.Op, slot uint64) {
	id := wire.SlotInstance(slot)
	if slot == 0 || id.Replica == 0 || id.Replica == r.id || r.gc.forgotten(id) {
		return
	}
	if inst := r.instances[id]; inst != nil && inst.status != wire.EUnknown {
		return
	}
	r.fragments[id] = mergeFragments(r.fragments[id], []wire.Op{op})
}

// mergeFragments adds ops to a fragment list, once each, in identity
// order: every replica that merges the same writes proposes the same
// command.
func mergeFragments(frags, ops []wire.Op) []wire.Op {
	for _, op := range ops {
		if !slices.ContainsFunc(frags, func(f wire.Op) bool { return f.ID == op.ID }) {
			frags = append(frags, op)
		}
	}
	slices.SortFunc(frags, func(a, b wire.Op) int { return a.ID.Compare(b.ID) })
	return frags
}

// preAcceptAgain runs the pre-accept phase again at recovery ballot b:
// the command could not have committed at ballot 0, so the union of a
// new majority's dependencies will do, with no fast path.
func (r *Replica) preAcceptAgain(inst *instance, b uint64, cmd wire.Command, initial []wire.Instance) {
	local := union(r.deps(inst.id, &cmd), instanceSet(initial, inst.id))
	inst.vbal, inst.status, inst.agreed = b, wire.EPreAccepted, false
	r.setCommand(inst, cmd)
	inst.deps = local
	r.records.instance(inst)
	msg := &wire.EPaxos{Kind: wire.EPreAccept, Instance: inst.id, Ballot: b, Command: cmd, Deps: local}
	self := reply(wire.EPreAcceptReply, msg)
	self.Deps = local
	r.start(inst, phasePreAccept, b, msg, self, false)
}

// sortedUncommitted lists the uncommitted instances in instance order, so
// that what a tick sends does not depend on a map's order.
func (r *Replica) sortedUncommitted() []*instance {
	out := make([]*instance, 0, len(r.uncommitted))
	for _, inst := range r.uncommitted {
		out = append(out, inst)
	}
	slices.SortFunc(out, func(a, b *instance) int { return a.id.Compare(b.id) })
	return out
}

// recoverStuck starts recovery of the instances this replica waited for
// too long.
func (r *Replica) recoverStuck() {
	for _, inst := range r.sortedUncommitted() {
		if inst.coord == nil && inst.recoverAt != 0 && r.now >= inst.recoverAt {
			r.recover(inst)
		}
	}
}
