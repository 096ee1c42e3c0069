package curp

import (
	"fmt"

	"github.com/hybridkv/hybridkv/internal/protocol"
)

// rewriteRecordsAt is the size past which the witness log is rewritten
// with the live records only, provided it has grown to four times them.
const rewriteRecordsAt = 4 << 20

// loadRecords restores the pool a restart emptied, minus the operations the
// replica's state already applied.
func (r *Replica) loadRecords() error {
	if r.records == nil {
		return nil
	}
	entries, err := r.records.Load()
	if err != nil {
		return err
	}
	for i := range entries {
		if e := &entries[i]; !r.Replica.Applied(e.Op.ID) {
			r.pool.Add(&e.Op, e.PrevWeak)
		}
	}
	r.pool.SetLog(r.records) // what was loaded is durable already
	return nil
}

// Ready implements protocol.Replica: the witness records added since the
// last round are synced by the round's write, so they are durable before
// any reply of this round goes out. (A disk that keeps both logs syncs the
// records together with the raft log's entries; this sync then has nothing
// left to do.)
func (r *Replica) Ready() protocol.Ready {
	rd := r.Replica.Ready()
	if r.records == nil {
		return rd
	}
	if r.records.Pending() {
		rd.Write = rd.Write.Also(r.records)
	}
	if n := r.records.Bytes(); n > rewriteRecordsAt && n > 4*r.liveRecordBytes() {
		if err := r.records.Rewrite(r.pooled()); err != nil {
			panic(fmt.Sprintf("replica %d: witness records: %v", r.ID(), err))
		}
	}
	return rd
}

// liveRecordBytes estimates what the pool's records take in the log. It
// runs every round, so it must not walk the pool: a replica that fell
// behind holds hundreds of thousands of records, and a walk per round took
// two thirds of its time.
func (r *Replica) liveRecordBytes() int64 {
	return r.pool.ValueBytes() + 24*int64(r.pool.Len())
}
