package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Snapshot serialises the whole state (map and session table) so raft can
// compact its log and bring a far-behind replica up to date.
//
// It runs on the replica's core thread, so it makes one pass over the map,
// in the map's own order (a snapshot is restored, never compared: sorting
// the keys and looking each up again took most of the time), into a
// buffer allocated once at its final size: grown by appending, the
// encoding of a large state copied itself several times over.
func (s *Store) Snapshot() []byte {
	b := make([]byte, 0, s.snapshotSize())
	b = binary.AppendUvarint(b, s.applied)
	b = binary.AppendUvarint(b, uint64(len(s.data)))
	for k, v := range s.data {
		b = binary.AppendUvarint(b, k)
		b = binary.AppendUvarint(b, v.Slot)
		b = binary.AppendUvarint(b, uint64(len(v.Value)))
		b = append(b, v.Value...)
	}
	b = binary.AppendUvarint(b, uint64(len(s.sessions)))
	for id, ss := range s.sessions {
		b = binary.AppendUvarint(b, id)
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
	}
	return b
}

// snapshotSize bounds the encoding's length: every varint at its widest.
func (s *Store) snapshotSize() int {
	const varint = binary.MaxVarintLen64
	n := 3*varint + len(s.data)*3*varint + s.valueBytes
	for _, ss := range s.sessions {
		n += 3 * varint
		for _, r := range ss.results {
			n += 4*varint + len(r.Value)
		}
	}
	return n
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
		s.valueBytes += len(v)
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
