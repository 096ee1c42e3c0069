package kvstore

import (
	"bytes"
	"slices"

	"github.com/google/btree"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// keyIndex is the table's records in their keys' byte order, for range
// reads. The table answers point reads; this is touched only when a key
// comes or goes. It holds record ids with their keys' heads, not keys, so
// the collector has only its nodes to visit, not a pointer per key, and a
// comparison reads a key's bytes only when the heads are equal: fetched
// from the arena for each of an insert's twenty-odd comparisons, they made
// the insert cost more than the rest of a write.
type keyIndex struct {
	tree  *btree.BTreeG[indexItem]
	key   func(id uint32) []byte
	probe []byte // the key id 0 stands for while the tree is searched
}

type indexItem struct {
	head keyHead
	id   uint32
}

// indexDegree is the B-tree's degree: nodes of up to 63 ids.
const indexDegree = 32

func newKeyIndex(t *keyTable) *keyIndex {
	x := &keyIndex{}
	x.key = func(id uint32) []byte {
		if id == 0 {
			return x.probe
		}
		return t.keyOf(id)
	}
	x.tree = btree.NewG(indexDegree, func(a, b indexItem) bool {
		if a.head != b.head {
			return a.head.less(b.head)
		}
		return bytes.Compare(x.key(a.id), x.key(b.id)) < 0
	})
	return x
}

func (x *keyIndex) item(id uint32) indexItem { return indexItem{headOf(x.key(id)), id} }

func (x *keyIndex) add(id uint32)    { x.tree.ReplaceOrInsert(x.item(id)) }
func (x *keyIndex) remove(id uint32) { x.tree.Delete(x.item(id)) }

// ascend hands fn the ids of the keys in [start, end), or from start on
// when open, in order, until fn returns false.
func (x *keyIndex) ascend(start, end string, open bool, fn func(id uint32) bool) {
	x.probe = append(x.probe[:0], start...)
	from := x.item(0)
	if open {
		x.tree.AscendGreaterOrEqual(from, func(it indexItem) bool { return fn(it.id) })
		return
	}
	x.tree.AscendGreaterOrEqual(from, func(it indexItem) bool {
		return string(x.key(it.id)) < end && fn(it.id)
	})
}

// NoEnd as a range's end asks for every key from its start on (see
// wire.NoEnd).
const NoEnd = wire.NoEnd

// Range hands fn the keys in [start, end) in byte order with their
// versions, at most limit of them (limit 0 or below: no limit), and stops
// early when fn returns false. An empty end asks for the key start alone,
// as etcd's empty range_end does; NoEnd for every key from start on. It
// returns how many keys fn was handed.
//
// fn must not change the store. The values handed out alias the store's
// chunks as Read's do, and stay valid.
func (s *Store) Range(start, end string, limit int, fn func(key string, v Version) bool) int {
	n := 0
	s.walk(start, end, func(key []byte, e *entry) bool {
		n++
		return fn(string(key), s.version(e)) && (limit <= 0 || n < limit)
	})
	return n
}

// walk hands fn the keys in the range, as Range has it, in byte order with
// their entries, until fn returns false. A key's bytes alias the key
// arena, whose bytes never change, or are a copy; the entry is fn's for
// the call. fn must not change the store.
func (s *Store) walk(start, end string, fn func(key []byte, e *entry) bool) {
	if end == "" {
		if e, ok := s.lookup(start); ok {
			fn([]byte(start), &e)
		}
		return
	}
	open := end == NoEnd
	if !open && start >= end {
		return
	}
	more := true
	// While frozen, keys written since the freeze are in the overlay alone,
	// and the table's may be overwritten or tombstoned there: merge them
	// in, in order. Otherwise the table's entry is the key's, found by
	// its id with no lookup.
	pending := s.overlayKeys(start, end, open)
	visitPending := func() {
		k := pending[0]
		pending = pending[1:]
		if e := s.overlay[k]; !e.deleted() {
			more = fn([]byte(k), &e)
		}
	}
	s.index.ascend(start, end, open, func(id uint32) bool {
		key := s.table.keyOf(id)
		for more && len(pending) > 0 && pending[0] < string(key) {
			visitPending()
		}
		if !more {
			return false
		}
		if len(pending) > 0 && pending[0] == string(key) {
			visitPending()
			return more
		}
		e := s.table.recs[id].val
		more = fn(key, &e)
		return more
	})
	for more && len(pending) > 0 {
		visitPending()
	}
}

// overlayKeys returns the overlay's keys in the range, sorted.
func (s *Store) overlayKeys(start, end string, open bool) []string {
	var keys []string
	for k := range s.overlay {
		if k >= start && (open || k < end) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
