package kvstore

import "github.com/hybridkv/hybridkv/internal/wire"

// Result is what an applied operation returns.
type Result struct {
	Found bool
	Value []byte
	// Revision is the key's version a Get found, as etcd counts it.
	Revision wire.Revision
	// Slot is the log index the operation was applied at.
	Slot uint64
}

// Version is a key's latest write as the store has applied it, with the
// key's revisions as etcd has them; all zero for an absent key.
type Version struct {
	Value []byte
	// Slot is the slot of the key's last write (etcd's mod_revision).
	Slot uint64
	// Create is the slot of the write that created the key, the first
	// since it was last absent (etcd's create_revision).
	Create uint64
	// Version counts the key's writes since its creation, that one
	// included (etcd's version); it stops at 2^32-1.
	Version uint64
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
//
// Keys are byte strings. A point read or write is a lookup in the key
// table; the keys' order, which a range read needs, is kept apart in a
// B-tree that only the creation or the deletion of a key touches (see
// index.go), so overwriting a key, the bulk of a run's writes, never
// reaches it.
type Store struct {
	// table indexes the values in vals by key.
	table keyTable
	// overlay takes the writes while the table is frozen for a snapshot
	// being encoded, a deletion as a tombstone; nil otherwise.
	overlay  map[string]entry
	frozen   *Frozen
	vals     arena
	index    *keyIndex
	keys     int // the keys there are, the overlay's included
	sessions map[uint64]*session
	applied  uint64
	// clock is the log's clock: the highest Now of the clock entries
	// applied (see Tick).
	clock  uint64
	digest uint64
	// expired counts the sessions this store forgot since it was built.
	expired uint64
	// expireAfter is the expiry of the last clock entry applied since the
	// store was built or restored; 0 before one.
	expireAfter uint64
}

// New returns an empty store.
func New() *Store {
	s := &Store{table: newKeyTable(), vals: newArena(), sessions: make(map[uint64]*session)}
	s.index = newKeyIndex(&s.table)
	return s
}

// Applied returns the slot of the last applied entry.
func (s *Store) Applied() uint64 { return s.applied }

// Read returns the key's applied version.
func (s *Store) Read(key string) (Version, bool) {
	e, ok := s.lookup(key)
	return s.version(&e), ok
}

// Revision is the version's revisions as a reply carries them.
func (v *Version) Revision() wire.Revision {
	return wire.Revision{Mod: v.Slot, Create: v.Create, Version: v.Version}
}

func (s *Store) version(e *entry) Version {
	return Version{Value: s.vals.get(e.ref), Slot: e.slot, Create: e.create, Version: uint64(e.version)}
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

// Overwritten records id, a write that a later write of its session to
// the same key applied at slot overwrote before id took effect, as
// applied there without an effect, unless the session table knows it
// already: a copy of it that comes later is a duplicate, and cannot undo
// the later write. It reports whether it recorded id.
func (s *Store) Overwritten(id wire.OpID, slot uint64) bool {
	ss := s.session(id.Session)
	if id.Seq < ss.floor {
		return false
	}
	if _, ok := ss.results[id.Seq]; ok {
		return false
	}
	ss.results[id.Seq] = Result{Slot: slot}
	return true
}

// Skip advances the applied index over a slot that holds no operation.
func (s *Store) Skip(slot uint64) { s.applied = slot }

// Tick applies the clock entry at slot: the clock moves to now if that is
// later, and every session that has applied nothing for expireAfter ticks
// or more is forgotten, results and all. An operation of a forgotten
// session that arrives later opens it again, as a new session's would: a
// retry of one it had applied would take effect twice, so the expiry must
// be far longer than a client goes on retrying an operation. A replica may
// hold one back for longer (a witness's record, on a replica down or cut
// off): CURP gives such records up rather than log them (see its
// outlived). Zero expireAfter forgets nothing.
//
// Every replica applies the same clock entries at the same slots, so every
// replica forgets the same sessions at the same slot and their session
// tables stay equal.
func (s *Store) Tick(slot, now, expireAfter uint64) {
	s.applied = slot
	s.clock = max(s.clock, now)
	s.expireAfter = expireAfter
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

// ExpireAfter returns the session expiry of the last clock entry applied
// since the store was built or restored, 0 before one.
func (s *Store) ExpireAfter() uint64 { return s.expireAfter }

// HasSession reports whether the session table holds the session: it
// applied an operation within the expiry.
func (s *Store) HasSession(id uint64) bool { _, ok := s.sessions[id]; return ok }

func (s *Store) execute(slot uint64, op *wire.Op) Result {
	switch op.Kind {
	case wire.Put:
		s.put(slot, op.Key, op.Value)
	case wire.Delete:
		s.delete(op.Key)
	case wire.Txn:
		return s.executeTxn(slot, op.Value)
	case wire.Scan:
		return s.executeScan(slot, op)
	default:
		e, ok := s.lookup(op.Key)
		return Result{Found: ok, Value: s.vals.get(e.ref), Revision: e.revision(), Slot: slot}
	}
	// A write's result is its slot alone, a delete's too: whether the key
	// was there is not reported, as a weak write's reply goes out before
	// the write is applied and could not say.
	return Result{Slot: slot}
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

// Digest summarises the key-value contents, each key's Version included:
// equal contents give equal digests regardless of the order writes were
// applied in. It is maintained incrementally, so reading it is free.
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

// entryHash is FNV-1a over the key's length and bytes, the slot that
// wrote it, its creation slot and version and the value: fixed across
// processes, so replicas running as separate programs produce comparable
// digests. The length keeps the boundary between key and slot where it is
// (key "ab" is not key "a" followed by other bytes). The slot makes a
// write applied twice show even when it wrote the value the key held: the
// second time, at a later slot.
//
// The creation slot and the version go in a word at a time rather than a
// byte, two steps rather than sixteen on every write: each step is a
// bijection of the hash so far for a given input, and of the input for a
// given hash, so two entries that differ in either alone still hash apart.
func entryHash(key string, e *entry, value []byte) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	n := uint64(len(key))
	for i := 0; i < 8; i++ {
		h = (h ^ (n >> (8 * i) & 0xff)) * prime
	}
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * prime
	}
	for i := 0; i < 8; i++ {
		h = (h ^ (e.slot >> (8 * i) & 0xff)) * prime
	}
	h = (h ^ e.create) * prime
	h = (h ^ uint64(e.version)) * prime
	for _, c := range value {
		h = (h ^ uint64(c)) * prime
	}
	return h
}
