package rafthtclient

import "github.com/hybridkv/hybridkv/internal/wire"

// cache is one session's knowledge of the keys it wrote or read: for each,
// the value as of a log index. Of two answers for a key, the one as of the
// later index is the fresher (the log only moves forward), so a weak read
// returns the replica's answer, as of the replica's applied index, unless
// the cache knows the key as of a later one.
//
// Entries the replica read from has caught up with are dropped, now and
// then, so the cache holds only what is newer than that replica's state;
// the highest index dropped is kept (dropped). A replica whose state is
// older than that (the client moved to another replica, or it restarted)
// may hold an older value of a dropped key: its answer is not used (see
// Client.weakAnswer).
type cache struct {
	keys map[string]cached
	// dropped is the highest index an entry was dropped at, or an
	// operation that wrote keys the cache does not name (a transaction, a
	// range delete) took effect at.
	dropped uint64
	// pruneAt is the size at which the next pruning runs.
	pruneAt int
}

// cached is a key's value as of log index asOf; slot is the slot of the
// write it shows (0 when not known).
type cached struct {
	found bool
	value []byte
	rev   wire.Revision
	slot  uint64
	asOf  uint64
}

// minPrune is the smallest size at which a cache is pruned.
const minPrune = 64

func newCache() *cache { return &cache{keys: make(map[string]cached), pruneAt: minPrune} }

// learn keeps v as key's value unless the cache knows it as of a later
// index.
func (c *cache) learn(key string, v cached) {
	if old, ok := c.keys[key]; ok && old.asOf >= v.asOf {
		return
	}
	c.keys[key] = v
}

// lookup returns the cached value of key.
func (c *cache) lookup(key string) (cached, bool) {
	v, ok := c.keys[key]
	return v, ok
}

// covers reports whether a state as of applied reflects everything the
// cache dropped.
func (c *cache) covers(applied uint64) bool { return applied >= c.dropped }

// barrier notes an operation at slot that wrote keys the cache cannot name:
// only states as of slot or later are used from now on.
func (c *cache) barrier(slot uint64) { c.dropped = max(c.dropped, slot) }

// prune drops, once the cache has grown enough since the last time, the
// entries a state as of applied already reflects. Pruning when the size
// doubled keeps its cost constant per entry.
func (c *cache) prune(applied uint64) {
	if len(c.keys) < c.pruneAt {
		return
	}
	for k, v := range c.keys {
		if v.asOf <= applied {
			delete(c.keys, k)
			c.dropped = max(c.dropped, v.asOf)
		}
	}
	c.pruneAt = max(minPrune, 2*len(c.keys))
}
