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
// writes go to an overlay and leave the frozen map alone. Encoding a
// million keys takes a tenth of a second or more; on the core thread of
// every replica at the same applied index it stalled the leader past its
// election timeout.
type Frozen struct {
	data       map[uint64]entry
	chunks     [][]byte
	sessions   map[uint64]session
	applied    uint64
	clock      uint64
	valueBytes int
	encoded    atomic.Bool
}

// Freeze takes a view of the state for a snapshot; the last view must be
// encoded (see Frozen). The session table is copied now (it holds a few
// results per session); the key-value map is shared until Thaw.
func (s *Store) Freeze() *Frozen {
	s.Thaw()
	if s.frozen != nil {
		panic("kvstore: Freeze while the last frozen view is being encoded")
	}
	f := &Frozen{data: s.data, chunks: s.vals.view(), sessions: make(map[uint64]session, len(s.sessions)),
		applied: s.applied, clock: s.clock, valueBytes: s.vals.live}
	for id, ss := range s.sessions {
		f.sessions[id] = session{floor: ss.floor, results: maps.Clone(ss.results), active: ss.active}
	}
	s.frozen, s.overlay = f, make(map[uint64]entry)
	return f
}

// Frozen reports whether a frozen view's encoding is still under way.
func (s *Store) Frozen() bool { return s.frozen != nil && !s.frozen.encoded.Load() }

// Thaw ends a freeze whose view is encoded: the overlay's writes go into
// the map. It does nothing while the encoding runs or when nothing is
// frozen, so a replica calls it once a round.
func (s *Store) Thaw() {
	if s.frozen == nil || !s.frozen.encoded.Load() {
		return
	}
	for k, v := range s.overlay {
		s.data[k] = v
	}
	s.frozen, s.overlay = nil, nil
}

// Encode serialises the frozen state; it may run on any goroutine, once.
//
// It makes one pass over the map, in the map's own order (a snapshot is
// restored, never compared: sorting the keys and looking each up again
// took most of the time), into a buffer allocated once at its final size:
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
	b = append(b, clockedFormat)
	b = binary.AppendUvarint(b, f.applied)
	b = binary.AppendUvarint(b, f.clock)
	b = binary.AppendUvarint(b, uint64(len(f.data)))
	for k, e := range f.data {
		b = binary.AppendUvarint(b, k)
		b = binary.AppendUvarint(b, e.slot)
		b = binary.AppendUvarint(b, uint64(e.n))
		b = append(b, bytesAt(f.chunks[e.chunk], e)...)
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
	n := 1 + 4*varint + len(f.data)*3*varint + f.valueBytes
	for _, ss := range f.sessions {
		n += 4 * varint
		for _, r := range ss.results {
			n += 4*varint + len(r.Value)
		}
	}
	return n
}

var errSnapshot = errors.New("kvstore: corrupt snapshot")

// clockedFormat opens a snapshot that holds the log's clock and when each
// session was last active. The format before it had neither and began with
// the applied index as a varint, never zero in a snapshot (the log is
// compacted only past its first entry), so its first byte is never zero.
const clockedFormat = 0

// Restore replaces the state with a snapshot's.
func Restore(b []byte) (*Store, error) {
	if len(b) > 0 && b[0] == clockedFormat {
		return restore(b[1:], true)
	}
	return restore(b, false)
}

// restore decodes a snapshot's body; in the format before the clock
// (clocked false) every session counts as active at time zero.
func restore(b []byte, clocked bool) (*Store, error) {
	r := reader{b: b}
	s := New()
	s.applied = r.uvarint()
	if clocked {
		s.clock = r.uvarint()
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		k, slot := r.uvarint(), r.uvarint()
		v := r.alias()
		s.data[k] = s.vals.put(k, slot, v)
		s.keys++
		s.digest ^= entryHash(k, slot, v)
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		id := r.uvarint()
		ss := &session{results: make(map[uint64]Result)}
		if clocked {
			ss.active = r.uvarint()
		}
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
	return s, r.err
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
