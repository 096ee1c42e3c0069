package smr

import "github.com/hybridkv/hybridkv/internal/wire"

// clockEntries is how many clock entries the leader logs per expiry: the
// clock, and so a session's expiry, moves in steps of 1/clockEntries of it.
const clockEntries = 64

// maybeLogClock has the leader log a clock entry once its ticks are a
// step past the log's clock. A replica's ticks are never behind the clock
// it applied (see applyClock), so the log's clock moves on across leader
// changes and restarts; a leader whose ticks run slow only delays expiry.
//
// A session is stamped with the clock of the last clock entry before its
// operation, so the clock must never fall behind the leader's ticks by
// more than a step while operations apply: were it left behind (by a
// leader that logged no clock while the table was empty, say), the next
// clock entry would jump past the expiry of a session that had just
// applied an operation, and a retry of it would take effect twice. So the
// leader logs one every step, with or without sessions, and one first
// thing on taking over (see clockOnLeading): a session is forgotten at
// most a step (1/clockEntries of the expiry) early.
func (r *Replica) maybeLogClock() {
	if r.expireAfter == 0 || !r.log.IsLeader() {
		return
	}
	step := max(1, r.expireAfter/clockEntries)
	if r.ticks < max(r.store.Clock(), r.clockLogged)+step {
		return
	}
	r.logClock()
}

// clockOnLeading logs a clock entry as a new leader's first proposal, so
// that the operations it logs next are stamped with its time rather than
// with whatever clock the log last held, however long ago that was.
func (r *Replica) clockOnLeading() {
	if r.expireAfter != 0 {
		r.logClock()
	}
}

func (r *Replica) logClock() {
	r.clockLogged = r.ticks
	r.batch = append(r.batch, wire.Append(nil, &wire.Clock{Now: r.ticks, ExpireAfter: r.expireAfter}))
}

// applyClock applies a clock entry: the store forgets the sessions idle
// for the entry's expiry (kvstore.Store.Tick). A follower's ticks start
// again from the log's clock, and a leader's catch up with it: so a new
// leader's first clock entry moves the clock on by no more than the time
// since the last one. Counting its own ticks all along, a follower whose
// clock ran faster than the leader's (or the leader's slower) would have
// jumped the clock by the whole difference on taking over, past the expiry
// of sessions active a moment before.
func (r *Replica) applyClock(index uint64, c *wire.Clock) {
	r.store.Tick(index, c.Now, c.ExpireAfter)
	r.followClock()
}

// followClock sets the replica's ticks from the log's clock, as the store
// now holds it: a follower's start again from it, a leader's catch up with
// it. It runs whenever the store's clock may have moved: a clock entry
// applied, or a snapshot installed in place of the store (a follower that
// catches up from one applies none of the clock entries it covers), and a
// store rebuilt on restart starts the ticks from its clock (see New).
// Left counting its own ticks, a follower whose clock ran fast while it
// was cut off, then caught up from a snapshot and elected, would jump the
// log's clock past the expiry of sessions active a moment before.
func (r *Replica) followClock() {
	if r.log.IsLeader() {
		r.ticks = max(r.ticks, r.store.Clock())
	} else {
		r.ticks = r.store.Clock()
	}
}

// SessionExpiry returns the session expiry in force, in ticks: the last
// clock entry's, or this replica's own setting before it applied one since
// it started or installed a snapshot; 0 if sessions never expire.
func (r *Replica) SessionExpiry() uint64 {
	if e := r.store.ExpireAfter(); e != 0 {
		return e
	}
	return r.expireAfter
}
