package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Snapshot serialises the whole state (map and session table) so raft can
// compact its log and bring a far-behind replica up to date.
//
// It runs on the replica's core thread, so it allocates its buffer once, at
// its final size: grown by appending, the encoding of a large state copied
// itself several times over (five times its size allocated, and twice the
// time).
func (s *Store) Snapshot() []byte {
	b := make([]byte, 0, s.snapshotSize())
	b = binary.AppendUvarint(b, s.applied)
	b = binary.AppendUvarint(b, uint64(len(s.data)))
	for _, k := range sortedKeys(s.data) {
		v := s.data[k]
		b = binary.AppendUvarint(b, k)
		b = binary.AppendUvarint(b, v.Slot)
		b = binary.AppendUvarint(b, uint64(len(v.Value)))
		b = append(b, v.Value...)
	}
	b = binary.AppendUvarint(b, uint64(len(s.sessions)))
	for _, id := range sortedKeys(s.sessions) {
		ss := s.sessions[id]
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, ss.floor)
		b = binary.AppendUvarint(b, uint64(len(ss.results)))
		for _, seq := range sortedKeys(ss.results) {
			r := ss.results[seq]
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
	}
	return b
}

// snapshotSize bounds the encoding's length: every varint at its widest.
func (s *Store) snapshotSize() int {
	const varint = binary.MaxVarintLen64
	n := 3 * varint
	for _, v := range s.data {
		n += 3*varint + len(v.Value)
	}
	for _, ss := range s.sessions {
		n += 3 * varint
		for _, r := range ss.results {
			n += 4*varint + len(r.Value)
		}
	}
	return n
}

func sortedKeys[V any](m map[uint64]V) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var errSnapshot = errors.New("kvstore: corrupt snapshot")

// Restore replaces the state with a snapshot's.
func Restore(b []byte) (*Store, error) {
	r := reader{b: b}
	s := New()
	s.applied = r.uvarint()
	for n := r.count(); n > 0 && r.err == nil; n-- {
		k, slot := r.uvarint(), r.uvarint()
		v := r.bytes()
		s.data[k] = Version{Value: v, Slot: slot}
		s.digest ^= entryHash(k, v)
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		id := r.uvarint()
		ss := &session{floor: r.uvarint(), results: make(map[uint64]Result)}
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

func (r *reader) bytes() []byte {
	n := r.count()
	if r.err != nil || n == 0 {
		return nil
	}
	v := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return v
}
