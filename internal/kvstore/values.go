package kvstore

import "github.com/hybridkv/hybridkv/internal/wire"

// The store keeps its values, and its keys' bytes, in large byte chunks
// rather than one heap object each, and indexes them by structures that
// hold no pointers (see keyTable): the garbage collector then neither
// scans the index nor visits a million values or keys, a walk every
// replica's collector otherwise repeats every second or two under load for
// as long as the state lives (BenchmarkCollectWithStore). A map keyed by
// string would be that walk again: with a million keys a collection took
// 130 ms against 4.
//
// A chunk's bytes are written once and never change: a value returned from
// the store aliases its chunk, and stays valid however long the caller
// keeps it. An overwritten value, or a deleted key's bytes, becomes
// garbage inside its chunk; once an arena's chunks hold half again as many
// bytes as its current ones, the store moves the current ones out of the
// emptiest chunk and drops it (Store.reclaim), one chunk at a time so
// that no apply stalls for long.

// chunkSize is the capacity of a chunk; a larger value has a chunk of its
// own. A quarter of a megabyte holds about 2,500 values of 100 bytes, which
// the store moves in well under a millisecond when it drops the chunk.
const chunkSize = 256 << 10

// ref is where a run of bytes lives in an arena: a value, or a key's
// bytes. An empty run has no bytes anywhere (n is zero).
type ref struct {
	chunk uint32
	off   uint32
	n     uint32
}

// entry is where the latest value of a key lives, and the key's revisions
// as etcd keeps them: slot is the slot that wrote the value (etcd's
// mod_revision), create the slot of the write that created the key, the
// first since it was last absent (create_revision), and version the
// writes since then, that one included (version).
//
// A key that is there has been written, so version 0 marks an entry that
// stands for no key: a tombstone in the overlay of a frozen store, or a
// free record in the key table; the zero entry is one. That, and a 32-bit
// version, keep an entry at 32 bytes and a record of the key table at 64,
// one cache line, as they were before entries had a create slot and a
// version: with a 64-bit version and a flag they took 72, and a lookup of
// a random key would mostly touch two lines.
//
// The version stops at maxVersion: a key written more often than that
// since its creation reads maxVersion from then on, on every replica
// alike. At a million writes a second to the one key, that is after 71
// minutes.
type entry struct {
	slot   uint64
	create uint64
	ref
	version uint32
}

// revision is the entry's revisions; zero for an entry that stands for
// no key.
func (e *entry) revision() wire.Revision {
	if e.deleted() {
		return wire.Revision{}
	}
	return wire.Revision{Mod: e.slot, Create: e.create, Version: uint64(e.version)}
}

// maxVersion is the highest version a key reaches (see entry).
const maxVersion = 1<<32 - 1

// deleted reports whether the entry stands for no key (see entry).
func (e *entry) deleted() bool { return e.version == 0 }

// rewritten returns the entry of a key that held e (the zero entry if
// none) once written at slot with the value at r.
func (e *entry) rewritten(slot uint64, r ref) entry {
	if e.deleted() {
		return entry{slot: slot, create: slot, ref: r, version: 1}
	}
	v := e.version
	if v < maxVersion {
		v++
	}
	return entry{slot: slot, create: e.create, ref: r, version: v}
}

// chunk is a run of values appended one after another.
type chunk struct {
	bytes []byte // the values appended so far; never reallocated
	// owners holds the record (see keyTable) of each value appended, as
	// far as it had one, so that reclaiming the chunk finds the current
	// values in it without a pointer anywhere.
	owners []uint32
	live   int // bytes of values that are still current
}

// arena is the chunks' bookkeeping. The store keeps its values in one and
// its keys' bytes in another.
type arena struct {
	chunks []chunk  // by id; a dropped chunk's id holds a zero chunk
	free   []uint32 // ids of dropped chunks, for reuse
	open   uint32   // the chunk values are appended to
	held   int      // bytes in the chunks, current or overwritten
	live   int      // bytes of the current values
}

func newArena() arena {
	return arena{chunks: []chunk{newChunk(chunkSize)}}
}

func newChunk(size int) chunk {
	return chunk{bytes: make([]byte, 0, size)}
}

// put appends the bytes of v, owned by the record owner (0 for one not
// known yet; see own), and returns where they live.
func (vs *arena) put(owner uint32, v []byte) ref { return appendBytes(vs, owner, v) }

// putString is put for a key's bytes.
func (vs *arena) putString(owner uint32, v string) ref { return appendBytes(vs, owner, v) }

func appendBytes[T string | []byte](vs *arena, owner uint32, v T) ref {
	if len(v) == 0 {
		return ref{}
	}
	c := &vs.chunks[vs.open]
	if cap(c.bytes)-len(c.bytes) < len(v) {
		c = vs.openChunk(max(chunkSize, len(v)))
	}
	r := ref{chunk: vs.open, off: uint32(len(c.bytes)), n: uint32(len(v))}
	c.bytes = append(c.bytes, v...)
	if owner != 0 {
		c.owners = append(c.owners, owner)
	}
	c.live += len(v)
	vs.held += len(v)
	vs.live += len(v)
	return r
}

// own records the owner of bytes put before it had one.
func (vs *arena) own(r ref, owner uint32) {
	if r.n != 0 {
		c := &vs.chunks[r.chunk]
		c.owners = append(c.owners, owner)
	}
}

// openChunk starts a new chunk of the given capacity for the values to
// come, reusing a dropped chunk's id when there is one.
func (vs *arena) openChunk(size int) *chunk {
	if n := len(vs.free); n > 0 {
		vs.open, vs.free = vs.free[n-1], vs.free[:n-1]
		vs.chunks[vs.open] = newChunk(size)
	} else {
		vs.open = uint32(len(vs.chunks))
		vs.chunks = append(vs.chunks, newChunk(size))
	}
	return &vs.chunks[vs.open]
}

// get returns the bytes r points to, aliasing its chunk; their capacity
// ends with them, so appending to them cannot reach the next value.
func (vs *arena) get(r ref) []byte {
	return bytesAt(vs.chunks[r.chunk].bytes, r)
}

func bytesAt(b []byte, r ref) []byte {
	if r.n == 0 {
		return nil
	}
	end := r.off + r.n
	return b[r.off:end:end]
}

// release records that the bytes r points to are no longer current: the
// key was written again or deleted.
func (vs *arena) release(r ref) {
	vs.chunks[r.chunk].live -= int(r.n)
	vs.live -= int(r.n)
}

// wasteful reports whether the chunks hold enough overwritten bytes that
// one should be emptied: more than half the current values' bytes, beyond
// a slack of two chunks so that a small store never bothers.
func (vs *arena) wasteful() bool {
	return vs.held > vs.live+vs.live/2+2*chunkSize
}

// emptiest returns the id of the full chunk with the fewest current bytes.
func (vs *arena) emptiest() uint32 {
	best, bestLive := vs.open, -1
	for id, c := range vs.chunks {
		if uint32(id) == vs.open || c.bytes == nil {
			continue
		}
		if bestLive < 0 || c.live < bestLive {
			best, bestLive = uint32(id), c.live
		}
	}
	return best
}

// drop forgets a chunk whose current values have all been moved out.
func (vs *arena) drop(id uint32) {
	vs.held -= len(vs.chunks[id].bytes)
	vs.chunks[id] = chunk{}
	vs.free = append(vs.free, id)
}

// view returns the chunks' bytes as they are now, for a frozen view that
// reads them on another goroutine while values are appended: appends go
// past every byte it reads, and no chunk is dropped while it is frozen.
func (vs *arena) view() [][]byte {
	v := make([][]byte, len(vs.chunks))
	for i, c := range vs.chunks {
		v[i] = c.bytes
	}
	return v
}
