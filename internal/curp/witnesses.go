package curp

import (
	"cmp"
	"maps"
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// A witness keeps its records in memory only, so a replica that restarts
// has lost every record it acknowledged before. A fast-path operation is
// safe because a superquorum recorded it; a witness that forgot its record
// and still counted — towards a new client's superquorum or in a new
// leader's recovery — could let an acknowledged write vanish.
//
// So every start of a replica is a new run of its witness, named by a random
// incarnation, and a run is complete when it holds every record it
// acknowledged: a replica that bootstrapped is complete from the start; one
// that restarted becomes complete once a leader has committed every
// operation it had logged when it learned of the restart. That covers every
// operation the lost records could have helped complete: a leader answers
// speculatively only after logging, and from the moment it knows of the
// new run it stops vouching for the old one.
//
// The leader vouches, in each speculative reply, for the runs it knows to be
// complete; a client counts a witness's ok only from a run the leader
// vouches for, and a new leader's recovery counts only complete runs. This
// is the CURP paper's witness replacement on raft terms: the restarted
// replica is a new witness that the leader admits after syncing.
type witnesses struct {
	// This replica's own run.
	incarnation uint64
	complete    bool
	// syncedTerm is the term whose leader acknowledged this run.
	syncedTerm uint64
	syncAge    int

	// On the leader: the complete runs of the other replicas, as a map and
	// as the list speculative replies carry (rebuilt on change, shared
	// read-only by replies in flight).
	known   map[wire.NodeID]uint64
	vouched []wire.Witness
	// syncs are incomplete runs waiting for the log to commit up to index.
	syncs map[wire.NodeID]pendingSync
}

type pendingSync struct {
	incarnation, index uint64
}

func newWitnesses(incarnation uint64, complete bool) witnesses {
	return witnesses{incarnation: max(incarnation, 1), complete: complete,
		known: make(map[wire.NodeID]uint64), syncs: make(map[wire.NodeID]pendingSync)}
}

// reset forgets what the leader knew of the other runs: a new leader learns
// them again through recovery and syncs.
func (w *witnesses) reset() {
	clear(w.known)
	clear(w.syncs)
	w.vouched = nil
}

func (w *witnesses) vouch(id wire.NodeID, incarnation uint64) {
	if w.known[id] == incarnation {
		return
	}
	w.known[id] = incarnation
	w.rebuild()
}

func (w *witnesses) distrust(id wire.NodeID) {
	if _, ok := w.known[id]; !ok {
		return
	}
	delete(w.known, id)
	w.rebuild()
}

func (w *witnesses) rebuild() {
	list := make([]wire.Witness, 0, len(w.known))
	for _, id := range slices.Sorted(maps.Keys(w.known)) {
		list = append(list, wire.Witness{ID: id, Incarnation: w.known[id]})
	}
	w.vouched = list
}

// onWitnessSync is the leader learning of a witness's run.
func (r *Replica) onWitnessSync(from wire.NodeID, m *wire.WitnessSync) {
	if !r.IsLeader() {
		return
	}
	if r.recovery != nil {
		// Answered when recovery ends: the sync point must come after the
		// replay.
		r.recovery.syncs[from] = m
		return
	}
	w := &r.wit
	if m.Complete {
		delete(w.syncs, from)
		w.vouch(from, m.Incarnation)
		r.ackSync(from, m.Incarnation)
		return
	}
	w.distrust(from)
	if s, ok := w.syncs[from]; ok && s.incarnation == m.Incarnation {
		return
	}
	// Every speculative reply that vouched for the witness's earlier run
	// answered an operation logged by now.
	w.syncs[from] = pendingSync{incarnation: m.Incarnation, index: r.LastIndex()}
	r.finishSyncs()
}

// finishSyncs admits the restarted runs whose sync point has committed.
func (r *Replica) finishSyncs() {
	w := &r.wit
	if len(w.syncs) == 0 {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(w.syncs)) {
		s := w.syncs[id]
		if r.Committed() < s.index {
			continue
		}
		delete(w.syncs, id)
		w.vouch(id, s.incarnation)
		r.ackSync(id, s.incarnation)
	}
}

func (r *Replica) ackSync(to wire.NodeID, incarnation uint64) {
	_, term := r.Leader()
	r.SendAfterWrite(to, &wire.WitnessSyncReply{Term: term, Incarnation: incarnation})
}

// onWitnessSyncReply is a leader counting this replica's run.
func (r *Replica) onWitnessSyncReply(m *wire.WitnessSyncReply) {
	w := &r.wit
	if m.Incarnation != w.incarnation {
		return
	}
	w.complete = true
	w.syncedTerm = max(w.syncedTerm, m.Term)
}

// syncTick has a witness introduce its run to each new leader, and
// re-sends until the leader acknowledges it.
func (r *Replica) syncTick() {
	leader, term := r.Leader()
	w := &r.wit
	if r.IsLeader() {
		r.finishSyncs()
		return
	}
	if leader == 0 || w.syncedTerm >= term {
		return
	}
	if w.syncAge%r.retryTicks == 0 {
		r.SendAfterWrite(leader, &wire.WitnessSync{Incarnation: w.incarnation, Complete: w.complete})
	}
	w.syncAge++
}

// learnRuns is a new leader admitting the runs that answered its recovery
// complete, then taking the syncs that arrived meanwhile.
func (r *Replica) learnRuns(rec *recovery) {
	for _, id := range slices.SortedFunc(maps.Keys(rec.runs), cmp.Compare) {
		if run := rec.runs[id]; run.Complete && id != r.ID() {
			r.wit.vouch(id, run.Incarnation)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(rec.syncs)) {
		r.onWitnessSync(id, rec.syncs[id])
	}
}
