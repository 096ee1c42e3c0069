package curp

import (
	"github.com/hybridkv/hybridkv/internal/wire"
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
		if r.outlived(rec.Op.ID.Session, rec.PooledAt) {
			r.pool.Remove(rec.Op.ID)
			r.staleOutlived++
			continue
		}
		s := &wire.StaleRecord{Op: rec.Op, PrevWeak: rec.PrevWeak, PooledAt: rec.PooledAt}
		if leader == r.ID() {
			r.collect(s)
			continue
		}
		r.staleForwarded++
		r.SendAfterWrite(leader, s)
	}
	if leader == r.ID() {
		r.releaseOutlived()
	}
}

// collect has the leader log a stale record (a peer's or its own) unless
// the operation is logged or applied already, or the record may have
// outlived it. Nothing is answered: the operation's client, if it still
// waits, retries and gets its reply then.
func (r *Replica) collect(s *wire.StaleRecord) {
	id := s.Op.ID
	if !r.IsLeader() || r.recovery != nil || r.Replica.Applied(id) || r.Proposed(id) || r.Logged(id) {
		return
	}
	if r.outlived(id.Session, s.PooledAt) {
		r.staleOutlived++
		return
	}
	r.staleLogged++
	r.replay(&wire.Request{Op: s.Op, PrevWeak: s.PrevWeak, Flags: wire.FlagRetry})
}

// outlived reports whether a record of one of session's operations that
// this replica's state has not applied, pooled at the log's clock
// pooledAt (witness.Record.PooledAt), may have outlived its operation:
// the state no longer knows the session and its clock is a whole expiry
// past pooledAt. The operation may then have been applied after the
// record was pooled, and its session forgotten since, as far as any
// replica can tell: the session table is what tells an applied operation
// from a new one, and it forgets expired sessions. Logged again, it would
// take effect twice. (A replica down with records of operations the
// others then applied, restarted more than an expiry later and caught up
// from a snapshot, handed them to the leader as stale records, and old
// writes overwrote newer ones: X1, seed 8273 of CURP-HO at N = 3.) So
// such a record is given up. Before the clock is an expiry past
// pooledAt, a session missing from the state cannot have applied the
// operation: it would still be in the table.
//
// What is given up is an operation that no leader logged for a whole
// expiry (an hour by default): a strong operation's client has long
// stopped waiting for it and recorded it as possibly applied, and a
// CURP-HO weak write its bound replica acknowledged is lost only if every
// replica holding its record went that long without a leader to hand it
// to, or caught up from a snapshot meanwhile.
func (r *Replica) outlived(session, pooledAt uint64) bool {
	e := r.SessionExpiry()
	st := r.Store()
	return e != 0 && !st.HasSession(session) && st.Clock() >= pooledAt+e
}
