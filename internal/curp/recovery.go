package curp

import (
	"cmp"
	"slices"

	"github.com/hybridkv/hybridkv/internal/quorum"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// recovery is a new leader gathering witness records before it serves.
type recovery struct {
	term    uint64
	replies map[wire.NodeID][]witness.Entry
	// runs says which run of each witness answered, and whether its
	// records are complete; only complete ones count.
	runs map[wire.NodeID]run
	// syncs are the witnesses' syncs that arrived during recovery.
	syncs map[wire.NodeID]*wire.WitnessSync
	ticks int
	// witnessed are the records this replica held as a witness when it
	// became leader; those not replayed leave the pool at the end.
	witnessed []wire.OpID
	// pooledAt is the latest PooledAt any witness's record of an
	// operation carried: one that may have outlived its operation is not
	// replayed (see outlived).
	pooledAt map[wire.OpID]uint64
}

func (r *Replica) startRecovery() {
	_, term := r.Leader()
	rec := &recovery{term: term, replies: make(map[wire.NodeID][]witness.Entry), runs: make(map[wire.NodeID]run),
		syncs: make(map[wire.NodeID]*wire.WitnessSync), pooledAt: make(map[wire.OpID]uint64)}
	rec.replies[r.ID()] = r.pooled()
	rec.runs[r.ID()] = run{Incarnation: r.wit.incarnation, Complete: r.wit.complete}
	for _, e := range rec.replies[r.ID()] {
		rec.witnessed = append(rec.witnessed, e.Op.ID)
		rec.stamp(e.Op.ID, r.pool.Get(e.Op.ID).PooledAt)
	}
	r.recovery = rec
	r.askPeers(rec)
	rec.maybeFinish(r)
}

// stamp keeps the latest PooledAt seen for id.
func (rec *recovery) stamp(id wire.OpID, pooledAt uint64) {
	rec.pooledAt[id] = max(rec.pooledAt[id], pooledAt)
}

// pooledRecords lists the pool in arrival order, so a replay is
// reproducible.
func (r *Replica) pooledRecords() []*witness.Record {
	recs := make([]*witness.Record, 0, r.pool.Len())
	r.pool.Each(func(rec *witness.Record) { recs = append(recs, rec) })
	slices.SortFunc(recs, func(a, b *witness.Record) int { return cmp.Compare(a.Order, b.Order) })
	return recs
}

// pooled lists the pool's entries in arrival order (pooledRecords).
func (r *Replica) pooled() []witness.Entry {
	recs := r.pooledRecords()
	entries := make([]witness.Entry, len(recs))
	for i, rec := range recs {
		entries[i] = witness.Entry{Op: rec.Op, PrevWeak: rec.PrevWeak}
	}
	return entries
}

func (r *Replica) askPeers(rec *recovery) {
	for _, p := range r.Peers() {
		if _, ok := rec.replies[p]; !ok {
			r.SendAfterWrite(p, &wire.Recover{Term: rec.term})
		}
	}
}

// onRecover answers a new leader with this witness's records.
func (r *Replica) onRecover(from wire.NodeID, m *wire.Recover) {
	rep := &wire.RecoverReply{Term: m.Term, Incarnation: r.wit.incarnation, Complete: r.wit.complete}
	recs := r.pooledRecords()
	for _, rec := range recs {
		rep.Ops = append(rep.Ops, rec.Op)
		if rec.PrevWeak != 0 && rep.PrevWeak == nil {
			rep.PrevWeak = make([]uint64, len(recs))
		}
		if rec.PooledAt != 0 && rep.PooledAt == nil {
			rep.PooledAt = make([]uint64, len(recs))
		}
	}
	for i, rec := range recs {
		if rep.PrevWeak != nil {
			rep.PrevWeak[i] = rec.PrevWeak
		}
		if rep.PooledAt != nil {
			rep.PooledAt[i] = rec.PooledAt
		}
	}
	r.SendAfterWrite(from, rep)
}

type run struct {
	Incarnation uint64
	Complete    bool
}

func (rec *recovery) onReply(r *Replica, from wire.NodeID, m *wire.RecoverReply) {
	if m.Term != rec.term {
		return
	}
	entries := make([]witness.Entry, len(m.Ops))
	for i := range m.Ops {
		entries[i].Op = m.Ops[i]
		if m.PrevWeak != nil {
			entries[i].PrevWeak = m.PrevWeak[i]
		}
		if m.PooledAt != nil {
			rec.stamp(m.Ops[i].ID, m.PooledAt[i])
		}
	}
	rec.replies[from] = entries
	rec.runs[from] = run{Incarnation: m.Incarnation, Complete: m.Complete}
	rec.maybeFinish(r)
}

// replay logs a recovered operation as its request would have been: after
// the session's previous weak write (CURP-HO holds it until that is logged),
// so a replay keeps each session's order.
func (r *Replica) replay(req *wire.Request) {
	if !broken.replayUnordered && !r.admit(0, req) {
		return
	}
	r.Propose(0, req)
}

// tick re-asks silent witnesses: the leader cannot commit without a
// majority anyway, so waiting costs nothing but keeps the replay complete.
func (rec *recovery) tick(r *Replica) {
	rec.ticks++
	if rec.ticks%r.retryTicks == 0 {
		r.askPeers(rec)
	}
}

// maybeFinish replays, once a majority of complete witnesses answered,
// every unapplied operation that at least ⌈f/2⌉+1 of them recorded, then
// serves the requests that waited. Fast-path operations were recorded by a
// superquorum of complete runs, and a run that lost its records is not
// complete until they were committed, so any majority of complete runs
// holds at least ⌈f/2⌉+1 records of each.
func (rec *recovery) maybeFinish(r *Replica) {
	f := r.F()
	complete := 0
	for _, run := range rec.runs {
		if run.Complete {
			complete++
		}
	}
	if complete < f+1 {
		return
	}
	threshold := quorum.Recorded(len(r.Peers()))
	var lists [][]witness.Entry
	for _, p := range r.Peers() {
		if rec.runs[p].Complete {
			lists = append(lists, rec.replies[p])
		}
	}
	// Applied and logged operations are not replayed: they are in the log
	// already, ahead of anything replayed. Nor are those whose records
	// may have outlived them (see outlived).
	done := func(id wire.OpID) bool {
		return r.Replica.Applied(id) || r.Logged(id) || r.outlived(id.Session, rec.pooledAt[id])
	}
	r.recovery = nil
	for _, e := range replayOrder(lists, done, threshold, f/2) {
		r.replay(&wire.Request{Op: e.Op, PrevWeak: e.PrevWeak})
	}
	// The leader's pool holds what it logged and has not applied, plus a
	// hybrid protocol's pooled weak writes (their clients re-send them
	// until committed). A strong witness record that was not replayed
	// belongs to an operation that did not complete on the fast path; kept,
	// it would block its key until its client retried.
	for _, id := range rec.witnessed {
		if rec := r.pool.Get(id); rec != nil && !r.Proposed(id) && !r.Logged(id) && !r.weakPath(&rec.Op) {
			r.pool.Remove(id)
		}
	}
	r.learnRuns(rec)
	r.requeueWaiting()
}
