package kvstore

// lookup returns where the key's value lives, the overlay first: a
// tombstone there hides the frozen table's entry.
func (s *Store) lookup(key string) (entry, bool) {
	if s.overlay != nil {
		if v, ok := s.overlay[key]; ok {
			return v, !v.deleted()
		}
	}
	return s.table.get(key)
}

// put writes the key at slot: its value, its last write's slot, and its
// version, and its creation slot if it was absent.
func (s *Store) put(slot uint64, key string, value []byte) {
	if s.overlay != nil {
		old, had := s.lookup(key)
		if had {
			s.digest ^= entryHash(key, &old, s.vals.get(old.ref))
			s.vals.release(old.ref)
		} else {
			old = entry{}
			s.keys++
		}
		// The key's record, if it is new, comes at the thaw, which owns
		// the value to it then.
		e := old.rewritten(slot, s.vals.put(0, value))
		s.overlay[key] = e
		s.digest ^= entryHash(key, &e, value)
		return
	}
	h, id := s.table.find(key)
	var old entry
	if id != 0 {
		old = s.table.recs[id].val
		s.digest ^= entryHash(key, &old, s.vals.get(old.ref))
		s.vals.release(old.ref)
	} else {
		id = s.table.insert(h, key)
		s.index.add(id)
		s.keys++
	}
	e := old.rewritten(slot, s.vals.put(id, value))
	s.table.recs[id].val = e
	s.digest ^= entryHash(key, &e, value)
	if s.vals.wasteful() {
		s.reclaim(&s.vals, func(r *rec) *ref { return &r.val.ref })
	}
}

// delete removes the key, if it is there. While the table is frozen the
// overlay keeps a tombstone, which Thaw applies, unless the table never
// held the key (it came since the freeze).
func (s *Store) delete(key string) {
	old, had := s.lookup(key)
	if !had {
		return
	}
	s.digest ^= entryHash(key, &old, s.vals.get(old.ref))
	s.vals.release(old.ref)
	s.keys--
	if s.overlay != nil {
		if _, inTable := s.table.get(key); inTable {
			s.overlay[key] = entry{} // a tombstone
		} else {
			delete(s.overlay, key)
		}
		return
	}
	s.removeKey(key)
	if s.vals.wasteful() {
		s.reclaim(&s.vals, func(r *rec) *ref { return &r.val.ref })
	}
}

// removeKey takes the key out of the table and the index; its value is
// released already.
func (s *Store) removeKey(key string) {
	id := s.table.unlink(key)
	if id == 0 {
		return
	}
	s.index.remove(id)
	s.table.release(id)
	if s.table.keys.wasteful() {
		s.reclaim(&s.table.keys, func(r *rec) *ref { return &r.key })
	}
}

// thawKeys folds a thawed overlay's writes and tombstones into the table.
func (s *Store) thawKeys(overlay map[string]entry) {
	for k, e := range overlay {
		if e.deleted() {
			s.removeKey(k)
			continue
		}
		h, id := s.table.find(k)
		if id == 0 {
			id = s.table.insert(h, k)
			s.index.add(id)
		}
		s.table.recs[id].val = e
		s.vals.own(e.ref, id)
	}
}

// reclaim moves the current bytes out of the arena's chunk that holds the
// fewest and drops it; at names the ref of a record's bytes in the arena.
// It changes the table's records and reads the chunks a frozen view
// reads, so it never runs while the table is frozen.
func (s *Store) reclaim(a *arena, at func(*rec) *ref) {
	id := a.emptiest()
	if id == a.open {
		return
	}
	for _, owner := range a.chunks[id].owners {
		r := &s.table.recs[owner]
		old := at(r)
		if r.val.deleted() || old.chunk != id || old.n == 0 {
			continue // overwritten or deleted since, or moved already
		}
		moved := a.put(owner, a.get(*old))
		a.release(*old)
		*old = moved
	}
	a.drop(id)
}
