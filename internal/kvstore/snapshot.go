package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync/atomic"
)

// Snapshot serialises the whole state (map and session table) so raft can
// compact its log and bring a far-behind replica up to date. It encodes on
// the caller's goroutine; a replica encodes through Freeze instead.
func (s *Store) Snapshot() []byte {
	f := s.Freeze()
	b := f.Encode()
	s.Thaw()
	return b
}

// Frozen is the state at the moment of a Freeze, which another goroutine
// may encode while the store goes on applying: until the store thaws, its
// writes go to an overlay and leave the frozen table alone. Encoding a
// million keys takes a tenth of a second or more; on the core thread of
// every replica at the same applied index it stalled the leader past its
// election timeout.
type Frozen struct {
	recs       []rec
	count      int
	keyChunks  [][]byte
	chunks     [][]byte
	sessions   map[uint64]session
	applied    uint64
	clock      uint64
	valueBytes int
	keyBytes   int
	encoded    atomic.Bool
}

// Freeze takes a view of the state for a snapshot; the last view must be
// encoded (see Frozen). The session table is copied now (it holds a few
// results per session); the key table and the chunks are shared until
// Thaw.
func (s *Store) Freeze() *Frozen {
	s.Thaw()
	if s.frozen != nil {
		panic("kvstore: Freeze while the last frozen view is being encoded")
	}
	f := &Frozen{recs: s.table.recs, count: s.table.len(), keyChunks: s.table.keys.view(), chunks: s.vals.view(),
		sessions: make(map[uint64]session, len(s.sessions)), applied: s.applied, clock: s.clock,
		valueBytes: s.vals.live, keyBytes: s.table.keys.live}
	for id, ss := range s.sessions {
		f.sessions[id] = session{floor: ss.floor, results: maps.Clone(ss.results), active: ss.active}
	}
	s.frozen, s.overlay = f, make(map[string]entry)
	return f
}

// Frozen reports whether a frozen view's encoding is still under way.
func (s *Store) Frozen() bool { return s.frozen != nil && !s.frozen.encoded.Load() }

// Thaw ends a freeze whose view is encoded: the overlay's writes and
// deletions go into the table. It does nothing while the encoding runs or
// when nothing is frozen, so a replica calls it once a round.
func (s *Store) Thaw() {
	if s.frozen == nil || !s.frozen.encoded.Load() {
		return
	}
	overlay := s.overlay
	s.frozen, s.overlay = nil, nil
	s.thawKeys(overlay)
}

// Encode serialises the frozen state; it may run on any goroutine, once.
//
// It makes one pass over the key table's records, in their own order (a
// snapshot is restored, never compared: sorting the keys and looking each
// up again took most of the time), into a buffer allocated once at its
// final size:
// grown by appending, the encoding of a large state copied itself several
// times over.
func (f *Frozen) Encode() []byte {
	defer f.encoded.Store(true)
	b, _ := f.encode(make([]byte, 0, f.size()), nil)
	return b
}

// writeChunk is how much of the encoding WriteTo gathers per write.
const writeChunk = 1 << 20

// WriteTo streams the encoding Encode returns to w, a chunk at a time, so
// that a large state is never held twice in memory; like Encode it may run
// on any goroutine, once.
func (f *Frozen) WriteTo(w io.Writer) (int64, error) {
	defer f.encoded.Store(true)
	var n int64
	flush := func(b []byte) ([]byte, error) {
		m, err := w.Write(b)
		n += int64(m)
		return b[:0], err
	}
	b, err := f.encode(make([]byte, 0, 2*writeChunk), flush)
	if err == nil && len(b) > 0 {
		_, err = flush(b)
	}
	return n, err
}

// encode appends the encoding to b; with flush set, it hands flush the
// buffer whenever it holds a chunk and goes on with what flush returns.
func (f *Frozen) encode(b []byte, flush func([]byte) ([]byte, error)) ([]byte, error) {
	var err error
	full := func() bool { return flush != nil && len(b) >= writeChunk }
	b = append(b, formatMark...)
	b = append(b, revisionFormat)
	b = binary.AppendUvarint(b, f.applied)
	b = binary.AppendUvarint(b, f.clock)
	b = binary.AppendUvarint(b, uint64(f.count))
	for i := 1; i < len(f.recs); i++ {
		r := &f.recs[i]
		if r.val.deleted() {
			continue // a free record
		}
		b = binary.AppendUvarint(b, uint64(r.key.n))
		b = append(b, bytesAt(f.keyChunks[r.key.chunk], r.key)...)
		b = binary.AppendUvarint(b, r.val.slot)
		b = binary.AppendUvarint(b, r.val.create)
		b = binary.AppendUvarint(b, uint64(r.val.version))
		b = binary.AppendUvarint(b, uint64(r.val.n))
		b = append(b, bytesAt(f.chunks[r.val.chunk], r.val.ref)...)
		if full() {
			if b, err = flush(b); err != nil {
				return b, err
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(f.sessions)))
	for id, ss := range f.sessions {
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, ss.active)
		b = binary.AppendUvarint(b, ss.floor)
		b = binary.AppendUvarint(b, uint64(len(ss.results)))
		for seq, r := range ss.results {
			b = binary.AppendUvarint(b, seq)
			b = binary.AppendUvarint(b, r.Slot)
			found := uint64(0)
			if r.Found {
				found = 1
			}
			b = binary.AppendUvarint(b, found)
			b = binary.AppendUvarint(b, uint64(len(r.Value)))
			b = append(b, r.Value...)
		}
		if full() {
			if b, err = flush(b); err != nil {
				return b, err
			}
		}
	}
	return b, nil
}

// size bounds the encoding's length: every varint at its widest.
func (f *Frozen) size() int {
	const varint = binary.MaxVarintLen64
	n := len(formatMark) + 1 + 4*varint + f.count*5*varint + f.keyBytes + f.valueBytes
	for _, ss := range f.sessions {
		n += 4 * varint
		for _, r := range ss.results {
			n += 4*varint + len(r.Value)
		}
	}
	return n
}

var errSnapshot = errors.New("kvstore: corrupt snapshot")

// A snapshot opens with formatMark and a version byte. The formats before
// it had integer keys, which no longer name anything a client can ask
// for, and Restore refuses them: the clocked format began with one zero
// byte and the applied index, never zero in a snapshot (the log is
// compacted only past its first entry), and the format before it with
// that index alone. So two zero bytes begin no older snapshot.
const formatMark = "\x00\x00"

// keyedFormat was the first version whose keys are byte strings, each a
// length and its bytes. It kept no key's creation slot or version, which
// transactions compare and which a replica that replayed the log would
// have: Restore refuses it rather than make them up.
const keyedFormat = 1

// revisionFormat is keyedFormat with each key's creation slot and version
// after the slot of its last write.
const revisionFormat = 2

// errOldFormat reports a snapshot of a version with integer keys.
var errOldFormat = errors.New("kvstore: snapshot from a version with integer keys; its data cannot be read")

// errNoRevisions reports a snapshot of keyedFormat.
var errNoRevisions = errors.New("kvstore: snapshot from a version that kept no key's creation slot or version; " +
	"its data cannot be restored as it would have been applied")

// Restore replaces the state with a snapshot's.
func Restore(b []byte) (*Store, error) { return restore(b, true) }

// RestoreUnordered is Restore for a store whose slots name writes without
// ordering them (a leaderless protocol's, where a key's creating write may
// carry a higher slot than a later write): it does not refuse a key
// written at a slot below the one that created it.
func RestoreUnordered(b []byte) (*Store, error) { return restore(b, false) }

func restore(b []byte, ordered bool) (*Store, error) {
	if len(b) < len(formatMark)+1 || string(b[:len(formatMark)]) != formatMark {
		if len(b) > 0 {
			return nil, errOldFormat
		}
		return nil, errSnapshot
	}
	switch v := b[len(formatMark)]; v {
	case revisionFormat:
	case keyedFormat:
		return nil, errNoRevisions
	default:
		return nil, fmt.Errorf("%w: unknown format %d", errSnapshot, v)
	}
	r := reader{b: b[len(formatMark)+1:]}
	s := New()
	s.applied = r.uvarint()
	s.clock = r.uvarint()
	for n := r.count(); n > 0 && r.err == nil; n-- {
		k := string(r.alias())
		slot, create, version := r.uvarint(), r.uvarint(), r.uvarint()
		v := r.alias()
		if r.err != nil {
			break
		}
		if version == 0 || version > maxVersion || ordered && create > slot || version == 1 && create != slot {
			r.err = fmt.Errorf("%w: key %q created at %d, written at %d, at version %d", errSnapshot, k, create, slot, version)
			break
		}
		h, id := s.table.find(k)
		if id != 0 {
			r.err = fmt.Errorf("%w: key %q twice", errSnapshot, k)
			break
		}
		id = s.table.insert(h, k)
		s.index.add(id)
		e := entry{slot: slot, create: create, version: uint32(version), ref: s.vals.put(id, v)}
		s.table.recs[id].val = e
		s.keys++
		s.digest ^= entryHash(k, &e, v)
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		id := r.uvarint()
		ss := &session{results: make(map[uint64]Result)}
		ss.active = r.uvarint()
		ss.floor = r.uvarint()
		for m := r.count(); m > 0 && r.err == nil; m-- {
			seq, slot, found := r.uvarint(), r.uvarint(), r.uvarint()
			ss.results[seq] = Result{Slot: slot, Found: found == 1, Value: r.bytes()}
		}
		s.sessions[id] = ss
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", errSnapshot, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errSnapshot
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) count() uint64 {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errSnapshot
		return 0
	}
	return n
}

// bytes returns a copy of a length-prefixed byte string.
func (r *reader) bytes() []byte {
	if v := r.alias(); len(v) > 0 {
		return append([]byte(nil), v...)
	}
	return nil
}

// alias returns a length-prefixed byte string aliasing the snapshot.
func (r *reader) alias() []byte {
	n := r.count()
	if r.err != nil || n == 0 {
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}
