package curpht

// Entry is a cached value and its version: the slot at which the session
// knows the value was current.
type Entry struct {
	Found   bool
	Value   []byte
	Version uint64
	// Seq is the session sequence number of the operation that produced
	// the entry, for comparing with the session's uncommitted writes.
	Seq uint64
}

type cacheKey struct {
	session, key uint64
}

// Cache holds, per session and key, the freshest value the session wrote or
// read. An entry is only useful while the closest replica has not applied
// its version; once it has, the replica answers at least as fresh, so the
// entry is dropped. That bounds the cache by what is in flight between the
// leader and the closest replica.
type Cache struct {
	entries map[cacheKey]Entry
	// applied is the highest applied index the closest replica reported.
	applied uint64
	// sweepAt is the cache size that triggers the next sweep.
	sweepAt int
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{entries: make(map[cacheKey]Entry), sweepAt: 1024}
}

// Len returns the number of entries.
func (c *Cache) Len() int { return len(c.entries) }

// Put records e unless the session already caches a newer version.
func (c *Cache) Put(session, key uint64, e Entry) {
	if e.Version <= c.applied {
		return // the closest replica already serves it
	}
	k := cacheKey{session, key}
	if old, ok := c.entries[k]; ok && old.Version >= e.Version {
		return
	}
	c.entries[k] = e
	if len(c.entries) >= c.sweepAt {
		c.sweep()
	}
}

// Get returns the session's entry for key.
func (c *Cache) Get(session, key uint64) (Entry, bool) {
	e, ok := c.entries[cacheKey{session, key}]
	return e, ok
}

// Fresher returns the session's entry for key if it is newer than what a
// replica that applied up to applied would answer.
func (c *Cache) Fresher(session, key, applied uint64) (Entry, bool) {
	k := cacheKey{session, key}
	e, ok := c.entries[k]
	if !ok {
		return Entry{}, false
	}
	if e.Version <= applied {
		delete(c.entries, k)
		return Entry{}, false
	}
	return e, true
}

// Observe notes that the closest replica has applied up to applied.
func (c *Cache) Observe(applied uint64) {
	c.applied = max(c.applied, applied)
}

func (c *Cache) sweep() {
	for k, e := range c.entries {
		if e.Version <= c.applied {
			delete(c.entries, k)
		}
	}
	c.sweepAt = max(1024, 2*len(c.entries))
}
