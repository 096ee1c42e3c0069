package epaxos

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// executor executes committed instances in dependency order: Tarjan's
// algorithm over the committed, unexecuted instances a root reaches
// yields their strongly connected components dependencies first; the
// instances of one execute in instance order. A root that reaches an
// uncommitted instance waits for it.
type executor struct {
	queue []wire.Instance
	// waiters holds, for each uncommitted instance, the roots waiting for
	// it.
	waiters map[wire.Instance][]wire.Instance
	// blockedOn remembers, for a committed instance a traversal found
	// waiting, the uncommitted instance it waits for: while that one stays
	// uncommitted, a later traversal that reaches it stops there instead
	// of walking the same graph again.
	blockedOn map[wire.Instance]wire.Instance
	// gen numbers traversals; an instance's traversal fields belong to
	// the traversal of its gen.
	gen    uint64
	count  int
	stack  []*instance
	frames []frame
}

// visit is an instance's state in the current traversal.
type visit struct {
	gen        uint64
	index, low int
	onStack    bool
}

type frame struct {
	inst *instance
	next int
}

func (e *executor) init() {
	e.waiters = make(map[wire.Instance][]wire.Instance)
	e.blockedOn = make(map[wire.Instance]wire.Instance)
}

// committed queues a newly committed instance and those waiting for it.
func (e *executor) committed(id wire.Instance) {
	e.queue = append(e.queue, id)
	if ws, ok := e.waiters[id]; ok {
		e.queue = append(e.queue, ws...)
		delete(e.waiters, id)
	}
}

// run executes what the queued instances allow.
func (e *executor) run(r *Replica) {
	for len(e.queue) > 0 {
		id := e.queue[0]
		e.queue = e.queue[1:]
		if inst := r.instances[id]; inst != nil && inst.status == wire.ECommitted {
			e.from(r, inst)
		}
	}
	e.queue = e.queue[:0]
}

// waitingFor returns the uncommitted instance a committed one was found
// waiting for, if it still is uncommitted.
func (e *executor) waitingFor(r *Replica, id wire.Instance) (wire.Instance, bool) {
	d, ok := e.blockedOn[id]
	if !ok {
		return d, false
	}
	if dep := r.instances[d]; dep != nil && dep.status < wire.ECommitted && !r.gc.forgotten(d) {
		return d, true
	}
	delete(e.blockedOn, id)
	return d, false
}

// block makes root wait for d, and remembers that every instance on the
// traversal's path waits for it too.
func (e *executor) block(r *Replica, root *instance, d wire.Instance) {
	e.waiters[d] = append(e.waiters[d], root.id)
	for _, f := range e.frames {
		e.blockedOn[f.inst.id] = d
	}
	r.needed(r.get(d))
}

// from executes root and everything it depends on, unless it reaches an
// uncommitted instance: then root waits for that one.
func (e *executor) from(r *Replica, root *instance) {
	if d, ok := e.waitingFor(r, root.id); ok {
		e.waiters[d] = append(e.waiters[d], root.id)
		return
	}
	e.gen++
	e.count = 0
	e.stack = e.stack[:0]
	e.frames = append(e.frames[:0], frame{inst: root})
	for len(e.frames) > 0 {
		f := &e.frames[len(e.frames)-1]
		v := &f.inst.visit
		if v.gen != e.gen {
			*v = visit{gen: e.gen, index: e.count, low: e.count, onStack: true}
			e.count++
			e.stack = append(e.stack, f.inst)
		}
		if f.next < len(f.inst.deps) {
			d := f.inst.deps[f.next]
			f.next++
			if r.gc.forgotten(d) {
				continue
			}
			dep := r.instances[d]
			switch {
			case dep != nil && dep.status == wire.EExecutedStatus:
			case dep == nil || dep.status != wire.ECommitted:
				if broken.executeUncommitted {
					continue
				}
				e.block(r, root, d)
				return
			default:
				if blocker, ok := e.waitingFor(r, d); ok {
					e.block(r, root, blocker)
					return
				}
				if dep.visit.gen != e.gen {
					e.frames = append(e.frames, frame{inst: dep})
				} else if dep.visit.onStack {
					v.low = min(v.low, dep.visit.index)
				}
			}
			continue
		}
		e.frames = e.frames[:len(e.frames)-1]
		if len(e.frames) > 0 {
			pv := &e.frames[len(e.frames)-1].inst.visit
			pv.low = min(pv.low, v.low)
		}
		if v.low == v.index {
			e.component(r, f.inst)
		}
	}
}

// component pops the strongly connected component whose first visited
// instance is first and executes it in instance order.
func (e *executor) component(r *Replica, first *instance) {
	i := len(e.stack) - 1
	for e.stack[i] != first {
		i--
	}
	scc := e.stack[i:]
	e.stack = e.stack[:i]
	for _, inst := range scc {
		inst.visit.onStack = false
		delete(e.blockedOn, inst.id)
	}
	slices.SortFunc(scc, func(a, b *instance) int { return a.id.Compare(b.id) })
	for _, inst := range scc {
		r.execute(inst)
	}
}

// execute applies an instance's operations and answers the clients
// waiting here for them.
func (r *Replica) execute(inst *instance) {
	if inst.indexed {
		r.conf.remove(inst.id, &inst.cmd, true)
		inst.indexed = false
	}
	inst.status = wire.EExecutedStatus
	for i := range inst.cmd.Ops {
		op := &inst.cmd.Ops[i]
		res, _ := r.store.Apply(slot(inst.id, i), op, inst.cmd.AckedBelow[i])
		r.applyOverwrites(op, inst.cmd.OverwritesOf(i), slot(inst.id, i))
		delete(r.proposed, op.ID)
		r.notifyExecuted(op, inst.id, i)
		if to, ok := r.waiting[op.ID]; ok {
			delete(r.waiting, op.ID)
			r.send(to, resultReply(op.ID, res, inst.fast))
		}
	}
	r.wake(inst.id)
	r.countExecuted(inst)
	r.stats.executedSet ^= mix(uint64(inst.id.Replica)<<56 ^ inst.id.Num)
	r.gc.executed(inst.id)
}

// countExecuted counts an executed instance and how long it waited here
// between its commit and its execution.
func (r *Replica) countExecuted(inst *instance) {
	wait := r.now - inst.committedAt
	r.stats.executed++
	r.stats.executeWait += wait
	if slices.ContainsFunc(inst.cmd.Ops, func(op wire.Op) bool { return op.Level == wire.Strong }) {
		r.stats.strongExecuted++
		r.stats.strongExecuteWait += wait
	}
}

// slot is the store's slot of an instance's i-th operation (see
// wire.Instance.Slot).
func slot(id wire.Instance, i int) uint64 { return id.Slot(i) }

// mix is splitmix64's finaliser: instances' fingerprints XOR into a set's.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
