package kvstore

import (
	"encoding/binary"
	"hash/maphash"
)

// rec is a key's record in the table: where its bytes and its latest value
// live, and the next record whose key hashes alike.
//
// A record is 64 bytes, a cache line, with no padding: the fields are in
// the order that keeps it so.
type rec struct {
	val  entry // val.deleted() marks a free record
	key  ref   // in the table's key arena
	next uint32
	// head is the key's first 16 bytes, zero-padded: a lookup compares it
	// and the length before the key's bytes, which a key of at most 16
	// bytes then never needs (they live in another cache line).
	head keyHead
}

// keyTable maps keys to records without a pointer the garbage collector
// would follow: a map from the key's hash to the first record of a chain,
// the records in one slice, the keys' bytes in an arena. A record's id is
// its index; id 0 is never used, so 0 ends a chain.
//
// Keys hash with a seed of this process's: the table is never compared
// across replicas (the digest is), so it need not hash alike anywhere
// else.
type keyTable struct {
	heads map[uint64]uint32
	recs  []rec
	free  []uint32 // ids of free records, for reuse
	keys  arena
	seed  maphash.Seed
}

func newKeyTable() keyTable {
	return keyTable{heads: make(map[uint64]uint32), recs: make([]rec, 1), keys: newArena(), seed: maphash.MakeSeed()}
}

// keyOf returns the key bytes of record id, aliasing the arena.
func (t *keyTable) keyOf(id uint32) []byte { return t.keys.get(t.recs[id].key) }

// find returns the key's hash and its record's id, 0 when it has none.
func (t *keyTable) find(key string) (uint64, uint32) {
	return t.findHashed(maphash.String(t.seed, key), key)
}

// findHashed looks for the key in the chain of hash h.
func (t *keyTable) findHashed(h uint64, key string) (uint64, uint32) {
	head := headOf(key)
	for id := t.heads[h]; id != 0; id = t.recs[id].next {
		r := &t.recs[id]
		if r.head == head && int(r.key.n) == len(key) && (len(key) <= keyHeadLen || string(t.keyOf(id)) == key) {
			return h, id
		}
	}
	return h, 0
}

// get returns the key's entry.
func (t *keyTable) get(key string) (entry, bool) {
	if _, id := t.find(key); id != 0 {
		return t.recs[id].val, true
	}
	return entry{}, false
}

// insert adds a record for a key the table does not hold, whose hash is h,
// and returns its id; its entry is the caller's to set.
func (t *keyTable) insert(h uint64, key string) uint32 {
	var id uint32
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
	} else {
		id = uint32(len(t.recs))
		t.recs = append(t.recs, rec{})
	}
	t.recs[id] = rec{key: t.keys.putString(id, key), head: headOf(key), next: t.heads[h]}
	t.heads[h] = id
	return id
}

// unlink takes the key's record out of its chain and returns its id, 0
// when the key has none. The record keeps its key until release, so that
// the ordered index can still find it.
func (t *keyTable) unlink(key string) uint32 {
	h, id := t.find(key)
	if id == 0 {
		return 0
	}
	next := t.recs[id].next
	if t.heads[h] == id {
		if next == 0 {
			delete(t.heads, h)
		} else {
			t.heads[h] = next
		}
		return id
	}
	for p := t.heads[h]; ; p = t.recs[p].next {
		if t.recs[p].next == id {
			t.recs[p].next = next
			return id
		}
	}
}

// release frees an unlinked record and its key's bytes.
func (t *keyTable) release(id uint32) {
	t.keys.release(t.recs[id].key)
	t.recs[id] = rec{} // its zero entry marks it free
	t.free = append(t.free, id)
}

// len returns the number of keys.
func (t *keyTable) len() int { return len(t.recs) - 1 - len(t.free) }

// keyHead is a key's first keyHeadLen bytes, zero-padded, as two
// big-endian words: heads that differ order their keys as the keys do (a
// key shorter than the other's head is its prefix, so sorts first), and
// equal heads leave the rest to the bytes.
type keyHead struct{ hi, lo uint64 }

const keyHeadLen = 16

func headOf[K ~string | ~[]byte](key K) keyHead {
	var b [keyHeadLen]byte
	copy(b[:], key)
	return keyHead{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func (h keyHead) less(o keyHead) bool {
	if h.hi != o.hi {
		return h.hi < o.hi
	}
	return h.lo < o.lo
}
