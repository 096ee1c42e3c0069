// Package sessions numbers a client process's operations per session and
// tracks which are still in flight, which is what a request's AckedBelow
// tells the replicas: everything below it completed and may be forgotten.
package sessions

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Table holds the sessions of one client process. Not safe for concurrent
// use: a client core owns it.
type Table struct {
	m map[uint64]*session
}

type session struct {
	next     uint64
	inflight []uint64 // ascending
}

// New returns an empty table.
func New() *Table { return &Table{m: make(map[uint64]*session)} }

// Start numbers a session's next operation and counts it in flight.
func (t *Table) Start(sess uint64) wire.OpID {
	s := t.m[sess]
	if s == nil {
		s = &session{next: 1}
		t.m[sess] = s
	}
	seq := s.next
	s.next++
	s.inflight = append(s.inflight, seq)
	return wire.OpID{Session: sess, Seq: seq}
}

// Finish stops counting an operation in flight.
func (t *Table) Finish(id wire.OpID) {
	if s := t.m[id.Session]; s != nil {
		if i, ok := slices.BinarySearch(s.inflight, id.Seq); ok {
			s.inflight = slices.Delete(s.inflight, i, i+1)
		}
	}
}

// Hold counts a finished operation in flight again, so that replicas keep
// its result (a weak write acknowledged before it is committed).
func (t *Table) Hold(id wire.OpID) {
	if s := t.m[id.Session]; s != nil {
		if i, ok := slices.BinarySearch(s.inflight, id.Seq); !ok {
			s.inflight = slices.Insert(s.inflight, i, id.Seq)
		}
	}
}

// AckedBelow is the session's lowest sequence number still in flight (the
// next one when none is).
func (t *Table) AckedBelow(sess uint64) uint64 {
	s := t.m[sess]
	switch {
	case s == nil:
		return 0
	case len(s.inflight) == 0:
		return s.next
	}
	return s.inflight[0]
}
