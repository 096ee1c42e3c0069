package curp

import (
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// defaultStaleRecordTicks is how old a witness record must be before the
// replica hands it to the leader: 3 s at the default 10 ms tick, six
// client retry intervals, so records of operations that are merely slow
// are left to their clients.
const defaultStaleRecordTicks = 300

// maxStalePerSweep bounds the records one sweep hands over. A follower
// that fell behind holds records of many operations the leader has long
// applied, all of them stale by age; handing over all at once, every
// sweep until it caught up, would flood the leader. The oldest go first,
// and what applies meanwhile leaves the pool.
const maxStalePerSweep = 256

// A record leaves a witness's pool when its operation applies, or when its
// session's client moves past it. An operation whose client gave up (it
// crashed, or timed out while the leader was out of its reach) never
// applies and its session may never send again: its records would stay in
// every witness for good, blocking the fast path on their key and, for a
// CURP-HO weak write acknowledged by the bound replica, leaving a write
// its client counted on out of the log. So, as the CURP paper's master
// retries the requests behind its witnesses' old records, every replica
// now and then hands the records it has held for staleTicks to the
// leader, which logs each one it has not logged or applied — as a client's
// retry would have. Once applied, the records leave every pool. The client
// either saw the operation complete or recorded it as possibly applied, so
// a late application breaks no promise; the session table keeps it from
// applying twice.
func (r *Replica) sweepStale() {
	r.sinceSweep++
	if r.sinceSweep < max(1, r.staleTicks/4) {
		return
	}
	r.sinceSweep = 0
	leader, _ := r.Leader()
	if leader == 0 || r.recovery != nil {
		return
	}
	stale := r.pool.Stale(uint64(r.staleTicks))
	for _, rec := range stale[:min(len(stale), maxStalePerSweep)] {
		req := staleRequest(rec)
		if leader == r.ID() {
			r.collect(req)
			continue
		}
		r.staleForwarded++
		r.SendAfterWrite(leader, req)
	}
}

func staleRequest(rec *witness.Record) *wire.Request {
	return &wire.Request{Op: rec.Op, PrevWeak: rec.PrevWeak, Flags: wire.FlagRetry}
}

// collect has the leader log a stale record (a peer's or its own) unless
// the operation is logged or applied already. Nothing is answered: the
// operation's client, if it still waits, retries and gets its reply then.
func (r *Replica) collect(req *wire.Request) {
	id := req.Op.ID
	if !r.IsLeader() || r.recovery != nil || r.Replica.Applied(id) || r.Proposed(id) || r.Logged(id) {
		return
	}
	r.staleLogged++
	r.replay(req)
}
