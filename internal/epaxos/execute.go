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
	// The traversal's state, kept between runs to reuse its memory.
	index, low map[wire.Instance]int
	onStack    map[wire.Instance]bool
	stack      []*instance
	frames     []frame
}

type frame struct {
	inst *instance
	next int
}

func (e *executor) init() {
	e.waiters = make(map[wire.Instance][]wire.Instance)
	e.index, e.low = make(map[wire.Instance]int), make(map[wire.Instance]int)
	e.onStack = make(map[wire.Instance]bool)
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

// from executes root and everything it depends on, unless it reaches an
// uncommitted instance: then root waits for that one.
func (e *executor) from(r *Replica, root *instance) {
	clear(e.index)
	clear(e.low)
	clear(e.onStack)
	e.stack = e.stack[:0]
	e.frames = append(e.frames[:0], frame{inst: root})
	count := 0
	for len(e.frames) > 0 {
		f := &e.frames[len(e.frames)-1]
		id := f.inst.id
		if f.next == 0 {
			if _, seen := e.index[id]; !seen {
				e.index[id], e.low[id] = count, count
				count++
				e.stack = append(e.stack, f.inst)
				e.onStack[id] = true
			}
		}
		if f.next < len(f.inst.deps) {
			d := f.inst.deps[f.next]
			f.next++
			if r.gc.forgotten(d) {
				continue
			}
			dep := r.get(d)
			switch {
			case dep.status == wire.EExecutedStatus:
			case dep.status != wire.ECommitted && broken.executeUncommitted:
			case dep.status != wire.ECommitted:
				e.waiters[d] = append(e.waiters[d], root.id)
				r.needed(dep)
				return
			default:
				if _, seen := e.index[d]; !seen {
					e.frames = append(e.frames, frame{inst: dep})
				} else if e.onStack[d] {
					e.low[id] = min(e.low[id], e.index[d])
				}
			}
			continue
		}
		e.frames = e.frames[:len(e.frames)-1]
		if len(e.frames) > 0 {
			parent := e.frames[len(e.frames)-1].inst.id
			e.low[parent] = min(e.low[parent], e.low[id])
		}
		if e.low[id] == e.index[id] {
			e.component(r, id)
		}
	}
}

// component pops the strongly connected component whose first visited
// instance is id and executes it in instance order.
func (e *executor) component(r *Replica, id wire.Instance) {
	i := len(e.stack) - 1
	for e.stack[i].id != id {
		i--
	}
	scc := e.stack[i:]
	e.stack = e.stack[:i]
	for _, inst := range scc {
		e.onStack[inst.id] = false
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
		delete(r.proposed, op.ID)
		if to, ok := r.waiting[op.ID]; ok {
			delete(r.waiting, op.ID)
			r.send(to, resultReply(op.ID, res, inst.fast))
		}
	}
	r.stats.executed++
	r.gc.executed(inst.id)
}

// slot is the store's slot of an instance's i-th operation: the same on
// every replica, though not in the order replicas execute (there is no
// log), so revisions name a write but do not order writes of different
// keys.
func slot(id wire.Instance, i int) uint64 {
	return id.Num<<20 | uint64(i)<<8 | uint64(id.Replica)
}
