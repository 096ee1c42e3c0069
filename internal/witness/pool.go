package witness

import (
	"cmp"
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Record is one pooled operation.
type Record struct {
	Op wire.Op
	// PrevWeak is the sequence number of the session's weak write before
	// this operation (0 if none): a replay of it must wait for that write,
	// as the request did.
	PrevWeak uint64
	// Order is the record's arrival rank in this pool: a later record on the
	// same key has a larger Order.
	Order uint64
	// Added is the pool's tick count when the record arrived.
	Added uint64
	// InLog is the index of the raft log entry that keeps the record
	// across a restart (AddInLog); 0 when the pool's Log keeps it.
	InLog uint64
	// PrevHere is set by a weak path that found every weak write of the
	// session before this one (the chain of PrevWeak) pooled or applied on
	// this replica. It stays true: a record leaves the pool only once its
	// operation is applied or forgotten, which the chain accepts as well.
	PrevHere bool
	// Round is the pool's round when the record arrived: the write of
	// that round makes it durable (see Durable); 0 for records pooled
	// before the first round, loaded from the disk.
	Round uint64
	// PooledAt is the pool's clock (SetClock) when the record arrived:
	// the log's clock of a state of this replica that had not applied the
	// operation. Were the operation applied after all, it was at that
	// clock or later, so its session cannot have been forgotten before the
	// clock reached PooledAt plus the expiry.
	PooledAt uint64
}

// Pool holds unapplied operations. Not safe for concurrent use.
type Pool struct {
	byKey map[string][]*Record
	byID  map[wire.OpID]*Record
	// bySession holds each session's records: a slice, not a map, as a
	// CURP-HO replica walks a session's records for every reply it sends.
	bySession map[uint64][]*Record
	// bySessionKey, when kept (IndexSessionKeys), holds each session's
	// records per key: a CURP-HO weak read looks for its session's own
	// writes on its key, which byKey would make it find among every
	// session's, and bySession among all of its session's, thousands when
	// nothing commits for a while. Other protocols do without: it cost a
	// CURP replica a map insertion, a deletion and an allocation per record.
	bySessionKey map[sessionKey][]*Record
	// txns holds the pooled transactions, which conflict with every
	// operation whatever its key.
	txns []*Record
	next uint64
	// ticks counts the pool's ticks, the clock records are aged by.
	ticks uint64
	// valueBytes sums the pooled operations' value lengths.
	valueBytes int64
	// log, when set, receives every new record.
	log Log
	// round is the current round (EndRound); durable the last round whose
	// write is done (Written).
	round, durable uint64
	// clock stamps new records' PooledAt (SetClock).
	clock uint64
}

type sessionKey struct {
	session uint64
	key     string
}

// New returns an empty pool.
func New() *Pool {
	return &Pool{
		byKey:     make(map[string][]*Record),
		byID:      make(map[wire.OpID]*Record),
		bySession: make(map[uint64][]*Record),
	}
}

// IndexSessionKeys has the pool index each session's records by key, for
// SessionKey. It is called on an empty pool.
func (p *Pool) IndexSessionKeys() {
	if len(p.byID) > 0 {
		panic("witness: IndexSessionKeys on a pool holding records")
	}
	p.bySessionKey = make(map[sessionKey][]*Record)
}

// Len returns the number of pooled operations.
func (p *Pool) Len() int { return len(p.byID) }

// ValueBytes sums the lengths of the pooled operations' values.
func (p *Pool) ValueBytes() int64 { return p.valueBytes }

// Has reports whether the operation is pooled.
func (p *Pool) Has(id wire.OpID) bool { _, ok := p.byID[id]; return ok }

// Get returns the pooled record of id, or nil.
func (p *Pool) Get(id wire.OpID) *Record { return p.byID[id] }

// Conflicting returns a pooled operation, other than op itself, that
// conflicts with op and satisfies match (nil matches all); nil if none.
func (p *Pool) Conflicting(op *wire.Op, match func(*Record) bool) *Record {
	for _, r := range p.byKey[op.Key] {
		if r.Op.ID != op.ID && r.Op.Conflicts(op) && (match == nil || match(r)) {
			return r
		}
	}
	for _, r := range p.txns {
		if r.Op.ID != op.ID && (match == nil || match(r)) {
			return r
		}
	}
	return nil
}

// Latest returns the most recent pooled operation on key that satisfies
// match (nil matches all), or nil.
func (p *Pool) Latest(key string, match func(*Record) bool) *Record {
	var best *Record
	for _, r := range p.byKey[key] {
		if (match == nil || match(r)) && (best == nil || r.Order > best.Order) {
			best = r
		}
	}
	return best
}

// Key hands fn every pooled operation on key (in no order).
func (p *Pool) Key(key string, fn func(*Record)) {
	for _, r := range p.byKey[key] {
		fn(r)
	}
}

// Add pools op, which followed the session's weak write prevWeak, unless it
// is already pooled, and returns its record.
func (p *Pool) Add(op *wire.Op, prevWeak uint64) *Record {
	r, added := p.add(op, prevWeak)
	if added && p.log != nil {
		p.log.Append(&r.Op, prevWeak)
	}
	return r
}

// AddInLog pools op like Add but leaves it out of the Log: the leader's
// raft log entry at index keeps it (see Log).
func (p *Pool) AddInLog(op *wire.Op, prevWeak, index uint64) *Record {
	r, added := p.add(op, prevWeak)
	if added {
		r.InLog = index
	}
	return r
}

// Keep appends a record that its raft log entry kept to the Log, before
// the entry leaves the log.
func (p *Pool) Keep(r *Record) {
	if r.InLog == 0 {
		return
	}
	r.InLog = 0
	if p.log != nil {
		p.log.Append(&r.Op, r.PrevWeak)
	}
}

func (p *Pool) add(op *wire.Op, prevWeak uint64) (*Record, bool) {
	if r := p.byID[op.ID]; r != nil {
		return r, false
	}
	p.next++
	r := &Record{Op: *op, PrevWeak: prevWeak, Order: p.next, Added: p.ticks, Round: p.round, PooledAt: p.clock}
	p.byID[op.ID] = r
	p.valueBytes += int64(len(op.Value))
	p.byKey[op.Key] = append(p.byKey[op.Key], r)
	p.bySession[op.ID.Session] = append(p.bySession[op.ID.Session], r)
	if p.bySessionKey != nil {
		sk := sessionKey{op.ID.Session, op.Key}
		p.bySessionKey[sk] = append(p.bySessionKey[sk], r)
	}
	if op.Kind == wire.Txn {
		p.txns = append(p.txns, r)
	}
	return r, true
}

// SetLog has every record added from now on appended to l.
func (p *Pool) SetLog(l Log) { p.log = l }

// SetClock moves the clock that stamps new records (Record.PooledAt)
// forward to clock, the log's clock of the owner's applied state, which
// has not applied the operations pooled from now on. It never moves back,
// and may lag: a stamp only needs to be no later than the truth.
func (p *Pool) SetClock(clock uint64) { p.clock = max(p.clock, clock) }

// EndRound ends the owner's round: records added from now on are made
// durable by the next round's write. The owner ends a round when it hands
// out the round's write, and once after loading what its disk kept.
func (p *Pool) EndRound() { p.round++ }

// Written records that the writes of rounds up to round are done.
func (p *Pool) Written(round uint64) { p.durable = max(p.durable, round) }

// Durable reports whether r, a pooled record, is known to be on disk: a
// done write took it, or it was loaded from the disk. It is false for nil.
func (p *Pool) Durable(r *Record) bool { return r != nil && r.Round <= p.durable }

// Remove drops the operation if pooled and reports whether it was.
func (p *Pool) Remove(id wire.OpID) bool {
	r := p.byID[id]
	if r == nil {
		return false
	}
	delete(p.byID, id)
	p.valueBytes -= int64(len(r.Op.Value))
	p.byKey[r.Op.Key] = removeRecord(p.byKey[r.Op.Key], r)
	if len(p.byKey[r.Op.Key]) == 0 {
		delete(p.byKey, r.Op.Key)
	}
	if rs := removeRecord(p.bySession[id.Session], r); len(rs) == 0 {
		delete(p.bySession, id.Session)
	} else {
		p.bySession[id.Session] = rs
	}
	if r.Op.Kind == wire.Txn {
		p.txns = removeRecord(p.txns, r)
	}
	if p.bySessionKey != nil {
		sk := sessionKey{id.Session, r.Op.Key}
		if rs := removeRecord(p.bySessionKey[sk], r); len(rs) == 0 {
			delete(p.bySessionKey, sk)
		} else {
			p.bySessionKey[sk] = rs
		}
	}
	return true
}

func removeRecord(rs []*Record, r *Record) []*Record {
	for i, x := range rs {
		if x == r {
			last := len(rs) - 1
			rs[i] = rs[last]
			rs[last] = nil
			return rs[:last]
		}
	}
	return rs
}

// SessionLen counts the pooled operations of a session.
func (p *Pool) SessionLen(session uint64) int { return len(p.bySession[session]) }

// Session calls fn for each pooled operation of a session (in no order).
func (p *Pool) Session(session uint64, fn func(*Record)) {
	for _, r := range p.bySession[session] {
		fn(r)
	}
}

// SessionKey calls fn for each pooled operation of a session on key (in no
// order). Without IndexSessionKeys it looks through all of the session's.
func (p *Pool) SessionKey(session uint64, key string, fn func(*Record)) {
	if p.bySessionKey == nil {
		for _, r := range p.bySession[session] {
			if r.Op.Key == key {
				fn(r)
			}
		}
		return
	}
	for _, r := range p.bySessionKey[sessionKey{session, key}] {
		fn(r)
	}
}

// Each calls fn for every pooled record (in no order).
func (p *Pool) Each(fn func(*Record)) {
	for _, r := range p.byID {
		fn(r)
	}
}

// Tick advances the clock records are aged by.
func (p *Pool) Tick() { p.ticks++ }

// Stale returns the records pooled for at least age ticks, in arrival
// order. It walks the whole pool, so callers ask now and then, not every
// tick.
func (p *Pool) Stale(age uint64) []*Record {
	var stale []*Record
	for _, r := range p.byID {
		if p.ticks-r.Added >= age {
			stale = append(stale, r)
		}
	}
	slices.SortFunc(stale, func(a, b *Record) int { return cmp.Compare(a.Order, b.Order) })
	return stale
}
