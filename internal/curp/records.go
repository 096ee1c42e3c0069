package curp

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// rewriteRecordsAt is the size past which the witness log is rewritten
// with the live records only, provided it has grown to four times them.
const rewriteRecordsAt = 4 << 20

// loadRecords restores the pool a restart emptied, minus the operations the
// replica's state already applied: the witness log's records and, where it
// marks a term this replica led, the unapplied entries of that term its
// raft log holds, which kept the leader's records (see witness.Log).
func (r *Replica) loadRecords() error {
	if r.records == nil {
		return nil
	}
	entries, err := r.records.Load()
	if err != nil {
		return err
	}
	led := r.ledEntries(entries)
	for i := range entries {
		e := &entries[i]
		if e.Lead != 0 {
			for _, l := range led[e.Lead] {
				r.pool.AddInLog(&l.req.Op, l.req.PrevWeak, l.index)
			}
			delete(led, e.Lead)
			continue
		}
		if !r.Replica.Applied(e.Op.ID) {
			r.pool.Add(&e.Op, e.PrevWeak)
		}
	}
	r.pool.SetLog(r.records) // what was loaded is durable already
	return nil
}

type loggedRequest struct {
	index uint64
	req   *wire.Request
}

// ledEntries returns, for each term the witness log marks as led by this
// replica, the unapplied operations of that term in its raft log: only the
// leader of a term makes entries of it, so they are the ones this replica
// logged as leader.
func (r *Replica) ledEntries(entries []witness.Entry) map[uint64][]loggedRequest {
	led := make(map[uint64][]loggedRequest)
	for _, e := range entries {
		if e.Lead != 0 {
			led[e.Lead] = nil
		}
	}
	if len(led) == 0 {
		return led
	}
	r.EachUnapplied(func(index uint64, req *wire.Request) {
		term, ok := r.Term(index)
		if _, mine := led[term]; ok && mine && !r.Replica.Applied(req.Op.ID) {
			led[term] = append(led[term], loggedRequest{index, req})
		}
	})
	return led
}

// poolLogged pools, on the leader, an operation it appended at index.
func (r *Replica) poolLogged(index uint64, req *wire.Request) {
	if r.recordsInLog {
		r.pool.AddInLog(&req.Op, req.PrevWeak, index)
		return
	}
	r.pool.Add(&req.Op, req.PrevWeak)
}

// keepReplaced logs the records kept by the raft log's entries from index
// on, which a new entry (or a snapshot, for index 0) is replacing, in the
// order they arrived; the round's write syncs them before the raft log's.
func (r *Replica) keepReplaced(index uint64) {
	if !r.recordsInLog || broken.dropReplacedRecords {
		return
	}
	var kept []*witness.Record
	r.pool.Each(func(rec *witness.Record) {
		if rec.InLog != 0 && rec.InLog >= index {
			kept = append(kept, rec)
		}
	})
	slices.SortFunc(kept, func(a, b *witness.Record) int { return cmp.Compare(a.Order, b.Order) })
	for _, rec := range kept {
		r.pool.Keep(rec)
	}
	r.keepFirst = r.keepFirst || len(kept) > 0
}

// Output completes the round's smr.Output: the witness records added
// since the last round are synced by the round's write, so they are
// durable before any reply of this round goes out. (A disk that keeps both
// logs syncs the records together with the raft log's entries; this sync
// then has nothing left to do.)
func (r *Replica) Output() protocol.Ready {
	rd := r.Replica.Output()
	r.pool.EndRound()
	r.pool.SetClock(r.Store().Clock())
	if r.records == nil {
		return rd
	}
	w, _ := rd.Write.(*raftlog.Write) // nil if the round wrote nothing
	if r.keepFirst {
		w = w.First(r.records)
		r.keepFirst = false
	}
	if r.records.Pending() {
		w = w.Also(r.records)
	}
	if w != nil {
		rd.Write = w
	}
	if n := r.records.Bytes(); n > rewriteRecordsAt && n > 4*r.liveRecordBytes() {
		r.rewriteRecords()
	}
	return rd
}

// WritesDone implements protocol.WriteWatcher: records of the rounds
// whose writes are done are durable, and a read's reply that names only
// those need not wait (ReplyTo).
func (r *Replica) WritesDone(round uint64) { r.pool.Written(round) }

// rewriteRecords replaces the witness log with the pool, the records the
// raft log kept included (they are the witness log's from then on), and a
// leader's mark for the records it logs next.
func (r *Replica) rewriteRecords() {
	entries := r.pooled()
	if _, term := r.Leader(); r.recordsInLog && r.IsLeader() {
		entries = append(entries, witness.Entry{Lead: term})
	}
	if err := r.records.Rewrite(entries); err != nil {
		panic(fmt.Sprintf("replica %d: witness records: %v", r.ID(), err))
	}
	r.pool.Each(func(rec *witness.Record) { rec.InLog = 0 })
}

// liveRecordBytes estimates what the pool's records take in the log. It
// runs every round, so it must not walk the pool: a replica that fell
// behind holds hundreds of thousands of records, and a walk per round took
// two thirds of its time.
func (r *Replica) liveRecordBytes() int64 {
	return r.pool.ValueBytes() + 24*int64(r.pool.Len())
}
