package epaxos

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// EPaxos-HO's weak path (Options.WeakPath), in the shape of CURP-HO's: the
// client's closest replica takes a weak write into an instance of its row
// as any command and answers it once its own record of the instance is
// durable, before any other replica has it; it answers a weak read from
// its executed state with the session's own earlier weak writes it holds
// on top, once it has executed what the session saw elsewhere (the
// request's After). Strong operations are EPaxos's, with the instances in
// their request's After among their dependencies: so a strong operation
// follows the session's weak writes even at a replica that has not heard
// of them yet.

// isWeakWrite reports whether the weak path answers op before it commits.
func (r *Replica) isWeakWrite(op *wire.Op) bool {
	return r.opts.WeakPath && op.Level == wire.Weak && (op.Kind == wire.Put || op.Kind == wire.Delete)
}

// isWeakRead reports whether the weak path answers op from the state.
func (r *Replica) isWeakRead(op *wire.Op) bool {
	return r.opts.WeakPath && op.Level == wire.Weak && (op.Kind == wire.Get || op.Kind == wire.Scan)
}

func weakAck(id wire.OpID, inst wire.Instance, i int) *wire.Reply {
	return &wire.Reply{Kind: wire.ReplyWeak, ID: id, Ok: true, Slot: slot(inst, i)}
}

// ackWeakWrites answers the weak writes of a new instance of this
// replica's row once its record is durable; their clients hear again when
// they execute, so that they stop carrying them (see carry).
func (r *Replica) ackWeakWrites(inst *instance) {
	for i := range inst.cmd.Ops {
		id := inst.cmd.Ops[i].ID
		if to, ok := r.acks[id]; ok {
			delete(r.acks, id)
			r.notify[id] = to
			r.sendAfter(to, weakAck(id, inst.id, i))
		}
	}
}

// notifyExecuted tells a weak write's client that it executed.
func (r *Replica) notifyExecuted(op *wire.Op, inst wire.Instance, i int) {
	if to, ok := r.notify[op.ID]; ok {
		delete(r.notify, op.ID)
		rep := weakAck(op.ID, inst, i)
		rep.Applied = 1
		r.send(to, rep)
	}
}

// carry batches the weak writes a strong request carries ahead of it, each
// unless it already executed or waits in an instance here: if the replica
// that acknowledged one is gone and recovery replaced its instance with a
// no-op (when no replica of the recovery's quorum had heard from a client
// where it was acknowledged: see decide), this copy takes effect, before
// the strong operation; if not, the copy is a duplicate the session table
// skips.
func (r *Replica) carry(req *wire.Request) {
	for i := range req.Writes {
		w := &req.Writes[i]
		if w.ID.Session != req.Op.ID.Session || w.ID.Seq >= req.Op.ID.Seq {
			continue
		}
		if _, outcome := r.store.Lookup(w.ID); outcome != kvstore.Unknown {
			continue
		}
		if _, ok := r.proposed[w.ID]; ok {
			continue
		}
		r.proposed[w.ID] = wire.Instance{}
		r.batch = append(r.batch, &wire.Request{Op: *w, AckedBelow: req.AckedBelow})
	}
}

// parkedRead is a weak read waiting for an instance to execute here.
type parkedRead struct {
	from wire.NodeID
	req  *wire.Request
}

// weakRead answers a weak read now, or parks it until what its session
// saw elsewhere has executed here. A parked read is looked at again only
// when the instance it waits for executes: looking at every parked read
// after every message made a replica's work per message grow with the
// reads outstanding, and at 99 % weak EPaxos-HO spent 70 % of its CPU
// there.
func (r *Replica) weakRead(from wire.NodeID, req *wire.Request) {
	r.answerOrPark(parkedRead{from, req})
}

func (r *Replica) answerOrPark(p parkedRead) {
	id, wait := r.waitsFor(p.req)
	if !wait {
		r.send(p.from, r.readNow(&p.req.Op))
		return
	}
	if r.parked == nil {
		r.parked = make(map[wire.Instance][]parkedRead)
	}
	r.parked[id] = append(r.parked[id], p)
}

// parkedReads counts the weak reads waiting.
func (r *Replica) parkedReads() int {
	n := 0
	for _, reads := range r.parked {
		n += len(reads)
	}
	return n
}

// wake moves the reads waiting for inst, which just executed, to those
// looked at again at the end of the round.
func (r *Replica) wake(inst wire.Instance) {
	if reads, ok := r.parked[inst]; ok {
		delete(r.parked, inst)
		r.woken = append(r.woken, reads...)
	}
}

// releaseParked answers the woken reads that can be answered now and
// parks the others again, each on the next instance it waits for.
// Answering executes nothing, so no read is woken meanwhile.
func (r *Replica) releaseParked() {
	for _, p := range r.woken {
		r.answerOrPark(p)
	}
	clear(r.woken)
	r.woken = r.woken[:0]
}

// waitsFor names an instance the request's read must see executed here
// and has not, if any: every instance the request names must have
// executed. Of this replica's own row, the session's weak writes not
// executed yet do not count: the answer shows them; its other operations
// up to the one named do (one may have completed elsewhere, answered
// from another replica's session table).
func (r *Replica) waitsFor(req *wire.Request) (wire.Instance, bool) {
	r.stats.readChecks++
	if broken.readIgnoresAfter {
		return wire.Instance{}, false
	}
	for _, id := range req.After {
		if r.gc.forgotten(id) {
			continue
		}
		if id.Replica == r.id {
			if pending, ok := r.ownRowPending(&req.Op, id.Num); ok {
				return pending, true
			}
			continue
		}
		inst := r.get(id)
		if inst.status != wire.EExecutedStatus {
			r.needed(inst)
			return id, true
		}
	}
	return wire.Instance{}, false
}

// ownRowPending names an instance of this replica's row numbered up to
// num, not executed yet, holding an operation of op's session before it
// other than a weak write, if any.
func (r *Replica) ownRowPending(op *wire.Op, num uint64) (wire.Instance, bool) {
	e := r.conf.sessions[op.ID.Session]
	if e == nil {
		return wire.Instance{}, false
	}
	for _, p := range e.pending {
		inst := r.instances[p.id]
		if p.id.Replica != r.id || p.id.Num > num || inst == nil || inst.status == wire.EExecutedStatus {
			continue
		}
		for i := range inst.cmd.Ops {
			w := &inst.cmd.Ops[i]
			if w.ID.Session == op.ID.Session && w.ID.Seq < op.ID.Seq && !r.isWeakWrite(w) {
				return p.id, true
			}
		}
	}
	return wire.Instance{}, false
}

// readNow answers a weak read from the executed state, with the session's
// unexecuted weak writes issued before it on top, the latest per key.
func (r *Replica) readNow(op *wire.Op) *wire.Reply {
	rep := &wire.Reply{Kind: wire.ReplyWeak, ID: op.ID, Ok: true}
	if op.Kind == wire.Scan {
		read, ok := wire.ScanRead(op)
		if !ok {
			return rep
		}
		res := r.store.Scan(&read)
		if writes := r.ownWrites(op, read.Covers); len(writes) > 0 {
			res = wire.Overlay(&read, res, writes, func(key string) bool {
				_, found := r.store.Read(key)
				return found
			})
		}
		rep.Found, rep.Value = true, wire.AppendScanResult(nil, &res)
		return rep
	}
	if own := r.ownWrites(op, func(k string) bool { return k == op.Key }); len(own) == 1 {
		rep.Found, rep.Value = own[0].Found, own[0].Value
		return rep
	}
	if v, ok := r.store.Read(op.Key); ok {
		// Slot names the write read, which the session's later
		// operations follow (see epaxosclient).
		rep.Found, rep.Value, rep.Revision, rep.Slot = true, v.Value, v.Revision(), v.Slot
	}
	return rep
}

// pendingWeakWrites calls fn with each weak write of op's session issued
// before op, of a key covers takes, that waits here unexecuted (in an
// instance of any row) and that the store has not applied.
func (r *Replica) pendingWeakWrites(op *wire.Op, covers func(string) bool, fn func(w *wire.Op)) {
	e := r.conf.sessions[op.ID.Session]
	if e == nil {
		return
	}
	for _, p := range e.pending {
		inst := r.instances[p.id]
		if inst == nil {
			continue
		}
		for i := range inst.cmd.Ops {
			w := &inst.cmd.Ops[i]
			if w.ID.Session != op.ID.Session || w.ID.Seq >= op.ID.Seq || !r.isWeakWrite(w) || !covers(w.Key) {
				continue
			}
			if _, outcome := r.store.Lookup(w.ID); outcome == kvstore.Unknown {
				fn(w)
			}
		}
	}
}

// ownWrites returns the effect of the session's unexecuted weak writes
// issued before op on the keys covers takes, the latest per key. A write
// the store applied already (its instance here is a copy a strong
// operation carried) has its effect in the state, or will never have one
// here again.
func (r *Replica) ownWrites(op *wire.Op, covers func(string) bool) []wire.KeyWrite {
	latest := make(map[string]*wire.Op)
	r.pendingWeakWrites(op, covers, func(w *wire.Op) {
		if prev := latest[w.Key]; prev == nil || w.ID.Seq > prev.ID.Seq {
			latest[w.Key] = w
		}
	})
	writes := make([]wire.KeyWrite, 0, len(latest))
	for key, w := range latest {
		writes = append(writes, wire.KeyWrite{Key: key, Found: w.Kind == wire.Put, Value: w.Value})
	}
	slices.SortFunc(writes, func(a, b wire.KeyWrite) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return writes
}

// A weak write W acknowledged here can lose its instance: cut off from
// the others, this replica goes on acknowledging its session's writes
// while recovery elsewhere replaces W's instance with a no-op. A copy of
// W taken up later (carried by a strong operation, sent again by its
// client, proposed again here) must not take effect after a later write
// of its session to the same key, which would undo that write's place in
// session order. So a command names, for each write it holds, the
// session's earlier weak writes of its key it overwrites (overwrites);
// executing the write counts them as applied where they have not been
// (applyOverwrites), which makes any later copy a duplicate. Every
// replica executes the command at the same point, so all agree.

// overwrites lists the seqs of op's session's earlier weak writes of op's
// key that wait here unexecuted, in an instance of any row. Each is among
// op's dependencies (a session's commands all conflict), so it executes
// before op unless recovery replaced its instance with a no-op or one
// component holds both.
func (r *Replica) overwrites(op *wire.Op) []uint64 {
	if !r.opts.WeakPath || op.Kind != wire.Put && op.Kind != wire.Delete || broken.noOverwrites {
		return nil
	}
	var seqs []uint64
	r.pendingWeakWrites(op, func(key string) bool { return key == op.Key }, func(w *wire.Op) {
		if !slices.Contains(seqs, w.ID.Seq) {
			seqs = append(seqs, w.ID.Seq)
		}
	})
	slices.Sort(seqs)
	return seqs
}

// applyOverwrites counts the writes op overwrites (seqs of its session)
// as applied at op's slot where they have not been, and tells their
// clients, waiting here, that they executed.
func (r *Replica) applyOverwrites(op *wire.Op, seqs []uint64, at uint64) {
	for _, seq := range seqs {
		id := wire.OpID{Session: op.ID.Session, Seq: seq}
		if !r.store.Overwritten(id, at) {
			continue
		}
		r.stats.overwritten++
		if to, ok := r.notify[id]; ok {
			delete(r.notify, id)
			r.send(to, &wire.Reply{Kind: wire.ReplyWeak, ID: id, Ok: true, Slot: at, Applied: 1})
		}
		if to, ok := r.waiting[id]; ok {
			delete(r.waiting, id)
			r.send(to, resultReply(id, kvstore.Result{Slot: at}, false))
		}
	}
}

// reproposeLost proposes again the weak writes this replica acknowledged
// whose instance recovery replaced with a no-op, ahead of what its batch
// holds: a later write of their session this replica takes from now on
// finds them waiting here, and overwrites them rather than being undone
// by them.
func (r *Replica) reproposeLost(lost []*wire.Request) {
	if len(lost) == 0 {
		return
	}
	for _, req := range lost {
		r.proposed[req.Op.ID] = wire.Instance{}
	}
	r.batch = slices.Insert(r.batch, 0, lost...)
}
