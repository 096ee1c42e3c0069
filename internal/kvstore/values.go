package kvstore

// The store keeps its values in large byte chunks rather than one heap
// object each, and indexes them by a map whose entries hold no pointers:
// the garbage collector then neither scans the index nor visits a million
// values, a walk every replica's collector otherwise repeats every second
// or two under load for as long as the state lives (BenchmarkCollectWithStore).
//
// A chunk's bytes are written once and never change: a value returned from
// the store aliases its chunk, and stays valid however long the caller
// keeps it. An overwritten value becomes garbage inside its chunk; once
// the chunks hold half again as many bytes as the current values, the
// store moves the current values out of the emptiest chunk and drops it
// (Store.reclaim), one chunk at a time so that no apply stalls for long.

// chunkSize is the capacity of a chunk; a larger value has a chunk of its
// own. A quarter of a megabyte holds about 2,500 values of 100 bytes, which
// the store moves in well under a millisecond when it drops the chunk.
const chunkSize = 256 << 10

// entry is where the latest value of a key lives, and the slot that wrote
// it. An empty value has no bytes anywhere (n is zero).
type entry struct {
	slot  uint64
	chunk uint32
	off   uint32
	n     uint32
}

// chunk is a run of values appended one after another.
type chunk struct {
	bytes []byte   // the values appended so far; never reallocated
	keys  []uint64 // the key of each value appended, in order
	live  int      // bytes of values that are still their key's latest
}

// values is the chunks' bookkeeping.
type values struct {
	chunks []chunk  // by id; a dropped chunk's id holds a zero chunk
	free   []uint32 // ids of dropped chunks, for reuse
	open   uint32   // the chunk values are appended to
	held   int      // bytes in the chunks, current or overwritten
	live   int      // bytes of the current values
}

func newValues() values {
	return values{chunks: []chunk{newChunk(chunkSize)}}
}

func newChunk(size int) chunk {
	return chunk{bytes: make([]byte, 0, size)}
}

// put appends key's new value and returns where it lives.
func (vs *values) put(key, slot uint64, v []byte) entry {
	if len(v) == 0 {
		return entry{slot: slot}
	}
	c := &vs.chunks[vs.open]
	if cap(c.bytes)-len(c.bytes) < len(v) {
		c = vs.openChunk(max(chunkSize, len(v)))
	}
	e := entry{slot: slot, chunk: vs.open, off: uint32(len(c.bytes)), n: uint32(len(v))}
	c.bytes = append(c.bytes, v...)
	c.keys = append(c.keys, key)
	c.live += len(v)
	vs.held += len(v)
	vs.live += len(v)
	return e
}

// openChunk starts a new chunk of the given capacity for the values to
// come, reusing a dropped chunk's id when there is one.
func (vs *values) openChunk(size int) *chunk {
	if n := len(vs.free); n > 0 {
		vs.open, vs.free = vs.free[n-1], vs.free[:n-1]
		vs.chunks[vs.open] = newChunk(size)
	} else {
		vs.open = uint32(len(vs.chunks))
		vs.chunks = append(vs.chunks, newChunk(size))
	}
	return &vs.chunks[vs.open]
}

// get returns the value e points to, aliasing its chunk; its capacity ends
// with it, so appending to it cannot reach the next value.
func (vs *values) get(e entry) []byte {
	return bytesAt(vs.chunks[e.chunk].bytes, e)
}

func bytesAt(b []byte, e entry) []byte {
	if e.n == 0 {
		return nil
	}
	end := e.off + e.n
	return b[e.off:end:end]
}

// overwritten records that the value e points to is no longer its key's
// latest.
func (vs *values) overwritten(e entry) {
	vs.chunks[e.chunk].live -= int(e.n)
	vs.live -= int(e.n)
}

// wasteful reports whether the chunks hold enough overwritten bytes that
// one should be emptied: more than half the current values' bytes, beyond
// a slack of two chunks so that a small store never bothers.
func (vs *values) wasteful() bool {
	return vs.held > vs.live+vs.live/2+2*chunkSize
}

// emptiest returns the id of the full chunk with the fewest current bytes.
func (vs *values) emptiest() uint32 {
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
func (vs *values) drop(id uint32) {
	vs.held -= len(vs.chunks[id].bytes)
	vs.chunks[id] = chunk{}
	vs.free = append(vs.free, id)
}

// view returns the chunks' bytes as they are now, for a frozen view that
// reads them on another goroutine while values are appended: appends go
// past every byte it reads, and no chunk is dropped while it is frozen.
func (vs *values) view() [][]byte {
	v := make([][]byte, len(vs.chunks))
	for i, c := range vs.chunks {
		v[i] = c.bytes
	}
	return v
}
