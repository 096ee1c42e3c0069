package kvstore

import "github.com/hybridkv/hybridkv/internal/wire"

// Result is what an applied operation returns.
type Result struct {
	Found bool
	Value []byte
	// Slot is the log index the operation was applied at.
	Slot uint64
}

// Version is a key's latest write as the store has applied it.
type Version struct {
	Value []byte
	Slot  uint64 // 0 when the key was never written
}

type session struct {
	floor   uint64            // every seq below floor completed at the client
	results map[uint64]Result // applied seqs at or above floor
	// active is the applied clock when the session's last operation was
	// applied (see Store.Tick).
	active uint64
}

// Store is one replica's applied state. It is not safe for concurrent use:
// a protocol core owns it. Only a Frozen view of it (see Freeze) may be
// read by another goroutine.
type Store struct {
	// data indexes the values in vals by key.
	data map[uint64]entry
	// overlay takes the writes while data is frozen for a snapshot being
	// encoded; nil otherwise.
	overlay  map[uint64]entry
	frozen   *Frozen
	vals     values
	keys     int
	sessions map[uint64]*session
	applied  uint64
	// clock is the log's clock: the highest Now of the clock entries
	// applied (see Tick).
	clock  uint64
	digest uint64
	// expired counts the sessions this store forgot since it was built.
	expired uint64
}

// New returns an empty store.
func New() *Store {
	return &Store{data: make(map[uint64]entry), vals: newValues(), sessions: make(map[uint64]*session)}
}

// lookup returns where the key's value lives, the overlay first.
func (s *Store) lookup(key uint64) (entry, bool) {
	if s.overlay != nil {
		if v, ok := s.overlay[key]; ok {
			return v, true
		}
	}
	v, ok := s.data[key]
	return v, ok
}

// Applied returns the slot of the last applied entry.
func (s *Store) Applied() uint64 { return s.applied }

// Read returns the key's applied version.
func (s *Store) Read(key uint64) (Version, bool) {
	e, ok := s.lookup(key)
	return Version{Value: s.vals.get(e), Slot: e.slot}, ok
}

// Outcome says what the session table knows of an operation.
type Outcome uint8

const (
	// Unknown: never applied (as far as this store has seen).
	Unknown Outcome = iota
	// Applied: applied; its result is kept.
	Applied
	// Forgotten: the client already saw it complete; the result is gone.
	Forgotten
)

// Floor is the session's floor: its client saw every operation below it
// complete, and their results are forgotten. Zero for an unknown session.
func (s *Store) Floor(session uint64) uint64 {
	if ss := s.sessions[session]; ss != nil {
		return ss.floor
	}
	return 0
}

// Lookup reports whether id was applied and, if its result is kept, the
// result.
func (s *Store) Lookup(id wire.OpID) (Result, Outcome) {
	ss := s.sessions[id.Session]
	if ss == nil {
		return Result{}, Unknown
	}
	if id.Seq < ss.floor {
		return Result{}, Forgotten
	}
	if r, ok := ss.results[id.Seq]; ok {
		return r, Applied
	}
	return Result{}, Unknown
}

// Apply applies the operation logged at slot. A duplicate of an applied
// operation is not applied again: its kept result is returned with dup set.
// ackedBelow lets the session table forget results the client no longer
// needs.
func (s *Store) Apply(slot uint64, op *wire.Op, ackedBelow uint64) (res Result, dup bool) {
	s.applied = slot
	ss := s.session(op.ID.Session)
	ss.active = s.clock
	ss.forgetBelow(ackedBelow)
	if op.ID.Seq < ss.floor {
		return Result{}, true
	}
	if r, ok := ss.results[op.ID.Seq]; ok {
		return r, true
	}
	res = s.execute(slot, op)
	ss.results[op.ID.Seq] = res
	return res, false
}

// Skip advances the applied index over a slot that holds no operation.
func (s *Store) Skip(slot uint64) { s.applied = slot }

// Tick applies the clock entry at slot: the clock moves to now if that is
// later, and every session that has applied nothing for expireAfter ticks
// or more is forgotten, results and all. An operation of a forgotten
// session that arrives later opens it again, as a new session's would: a
// retry of one it had applied would take effect twice, so the expiry must
// be far longer than a client goes on retrying an operation and than any
// replica holds one back (a witness's stale record, a replica cut off).
// Zero expireAfter forgets nothing.
//
// Every replica applies the same clock entries at the same slots, so every
// replica forgets the same sessions at the same slot and their session
// tables stay equal.
func (s *Store) Tick(slot, now, expireAfter uint64) {
	s.applied = slot
	s.clock = max(s.clock, now)
	if expireAfter == 0 || s.clock < expireAfter {
		return
	}
	for id, ss := range s.sessions {
		if s.clock-ss.active >= expireAfter {
			delete(s.sessions, id)
			s.expired++
		}
	}
}

// Expired counts the sessions this store forgot (see Tick) since it was
// built: a restarted replica counts again those it forgets replaying its
// log.
func (s *Store) Expired() uint64 { return s.expired }

// Clock returns the log's clock: the latest time, in the leader's ticks,
// of the clock entries applied.
func (s *Store) Clock() uint64 { return s.clock }

func (s *Store) execute(slot uint64, op *wire.Op) Result {
	if !op.Kind.IsWrite() {
		v, ok := s.Read(op.Key)
		return Result{Found: ok, Value: v.Value, Slot: slot}
	}
	old, had := s.lookup(op.Key)
	if had {
		s.digest ^= entryHash(op.Key, old.slot, s.vals.get(old))
		s.vals.overwritten(old)
	} else {
		s.keys++
	}
	e := s.vals.put(op.Key, slot, op.Value)
	if s.overlay != nil {
		s.overlay[op.Key] = e
	} else {
		s.data[op.Key] = e
		if s.vals.wasteful() {
			s.reclaim()
		}
	}
	s.digest ^= entryHash(op.Key, slot, op.Value)
	return Result{Slot: slot}
}

// reclaim moves the current values out of the chunk that holds the fewest
// and drops it. It changes entries in data, so it never runs while data is
// frozen.
func (s *Store) reclaim() {
	id := s.vals.emptiest()
	if id == s.vals.open {
		return
	}
	for _, k := range s.vals.chunks[id].keys {
		e := s.data[k]
		if e.chunk != id || e.n == 0 {
			continue // overwritten since, or moved already
		}
		s.data[k] = s.vals.put(k, e.slot, s.vals.get(e))
		s.vals.overwritten(e)
	}
	s.vals.drop(id)
}

func (s *Store) session(id uint64) *session {
	ss := s.sessions[id]
	if ss == nil {
		ss = &session{results: make(map[uint64]Result)}
		s.sessions[id] = ss
	}
	return ss
}

func (ss *session) forgetBelow(seq uint64) {
	if seq <= ss.floor {
		return
	}
	ss.floor = seq
	for k := range ss.results {
		if k < seq {
			delete(ss.results, k)
		}
	}
}

// Digest summarises the key-value contents: equal maps give equal digests
// regardless of the order writes were applied in. It is maintained
// incrementally, so reading it is free.
func (s *Store) Digest() uint64 { return s.digest }

// Sessions returns the number of sessions in the session table: those
// that applied an operation within the expiry (see Tick).
func (s *Store) Sessions() int { return len(s.sessions) }

// Replies returns the number of results the session table keeps for
// duplicate detection. It walks every session, so it is for monitoring, not
// for the apply path.
func (s *Store) Replies() int {
	n := 0
	for _, ss := range s.sessions {
		n += len(ss.results)
	}
	return n
}

// Len returns the number of keys.
func (s *Store) Len() int { return s.keys }

// entryHash is FNV-1a over the key, the slot that wrote it and the value:
// fixed across processes, so replicas running as separate programs produce
// comparable digests. The slot makes a write applied twice show even when
// it wrote the value the key held: the second time, at a later slot.
func entryHash(key, slot uint64, value []byte) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h = (h ^ (key >> (8 * i) & 0xff)) * prime
	}
	for i := 0; i < 8; i++ {
		h = (h ^ (slot >> (8 * i) & 0xff)) * prime
	}
	for _, c := range value {
		h = (h ^ uint64(c)) * prime
	}
	return h
}
