package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// checkCausal checks W1–W5, C1 and C2 with one sweep over the history in
// time order, computing every op's causal past as a vclock.
//
// Causal order is the closure of session order, reads-from and real-time
// order among strong ops (without the last for a protocol that claims
// guarantees.Claims.NoStrongRealTime: noStrongRT). Each edge points forward in time once a write's
// past is taken at its invocation and a read's at its return (a read may
// observe a write that is still in flight, but never one invoked after it
// returned: that is a future read, reported by checkCycles, whose edge the
// sweep leaves out). So one sweep computes every past from pasts already
// known: per-session and strong accumulators hold the union of the pasts
// of all ops that have returned, and an op's past is the accumulators'
// state at its invocation, joined, for a read, with the past of the write
// it read.
//
// A read r on key k that returned w1 (or nothing) breaks causal
// visibility when a write w2 on k in r's past is newer than w1: later in
// the log when both slots are known, or causally after w1
// (w1 →co w2 →co r: the WriteCORead pattern of Bouajjani et al., "On
// verifying causal consistency", POPL 2017), or, when r found nothing, any
// w2 at all (WriteCOInitRead). A write whose slot is lower than that of a
// write in its own causal past shows the log contradicting causal order
// (CyclicCF). Which guarantee a stale read breaks follows from how w2
// reached r; see classify.
//
// Cost: O(n log n) for sorting, O(n·S) for the joins over S sessions (a
// read of a write its past already holds joins nothing: most of a long
// scan's reads of an old, preloaded key space), and
// per read O(log n) plus the writes on its key invoked between the write
// it read and its return, or logged after that write and invoked before
// its return: few for a read of a recent value, however many sessions
// write a hot key. A read that found nothing costs a look per session
// that wrote its key and, on a key with deletes, the writes invoked after
// the delete that explains it (the latest are tried first); only a stale
// one costs a pass over its key's writes. Memory: S words per live clock,
// and per write one word per session that wrote its key (kept to test
// w1 →co w2 later).
func checkCausal(h *hist, rep *reporter, noStrongRT bool) {
	s := &sweep{h: h, rep: rep, c: &clocks{ops: h.ops, n: h.sessions, h: h}, noStrongRT: noStrongRT}
	s.run()
}

type sweep struct {
	h   *hist
	rep *reporter
	c   *clocks
	// noStrongRT leaves real-time order between strong ops out.
	noStrongRT bool
	// closed holds when no read observed a write invoked after it
	// returned. Every past is then closed under causal order: a write in
	// a past brought its own past along (through session order, through
	// the read that observed it, or through the strong accumulator), so a
	// read of a write its past already holds adds nothing. Only a future
	// read, whose edge the sweep leaves out, puts a write in a past
	// without its own.
	closed bool

	sessAcc []*vclock
	strong  *vclock
	vcs     []*vclock // reads' live clocks by op
	pending []int32   // uses left before an op's past is dropped
	writeNo []int32   // per op, its index in writes, or -1 for a read
	writes  []writePast
	thawed  *vclock // scratch for joining a frozen past

	cls *classifier
}

// writePast is what the sweep keeps of a write's causal past.
type writePast struct {
	// all is the whole past, for the reads of the write to join; dropped
	// once the last of them returned.
	all frozen
	// t and g restrict the past to what later w1 →co w2 tests need: the t
	// entries of its key's writers and the g members writing its key.
	t []int64
	g []int32
}

// order returns the ops by invocation and the completed ones by return,
// ties by index: the sweep's two streams of events. Indexes, not
// (time, op) pairs: a long run's history has tens of millions of ops, and
// the pairs took 32 bytes an op where these take 8.
func (s *sweep) order() (byInv, byRet []int32) {
	ops := s.h.ops
	byInv = make([]int32, len(ops))
	done := 0
	for i := range ops {
		byInv[i] = int32(i)
		if ops[i].ok {
			done++
		}
	}
	byRet = make([]int32, 0, done)
	for i := range ops {
		if ops[i].ok {
			byRet = append(byRet, int32(i))
		}
	}
	slices.SortFunc(byInv, func(a, b int32) int { return cmp.Or(cmp.Compare(ops[a].inv, ops[b].inv), cmp.Compare(a, b)) })
	slices.SortFunc(byRet, func(a, b int32) int { return cmp.Or(cmp.Compare(ops[a].ret, ops[b].ret), cmp.Compare(a, b)) })
	return byInv, byRet
}

func (s *sweep) run() {
	h := s.h
	n := len(h.ops)
	s.sessAcc = make([]*vclock, h.sessions)
	for i := range s.sessAcc {
		s.sessAcc[i] = s.c.empty()
	}
	s.strong = s.c.empty()
	s.vcs = make([]*vclock, n)
	s.pending = make([]int32, n)
	s.writeNo = make([]int32, n)
	s.thawed = s.c.empty()
	s.cls = &classifier{h: h, c: s.c, claims: s.rep.claimed, before: s.before}

	reads, strongReads, slotted := 0, 0, 0
	s.closed = true
	for i := range h.ops {
		o := &h.ops[i]
		if o.future {
			s.closed = false
		}
		if o.ok {
			s.pending[i] = 1
		}
		s.writeNo[i] = -1
		if o.write {
			s.writeNo[i] = int32(len(s.writes))
			s.writes = append(s.writes, writePast{})
			s.pending[i] += h.readers[i]
			if o.slot != 0 {
				slotted++
			}
		} else if o.rf != thinAir {
			reads++
			if o.strong {
				strongReads++
			}
		}
	}
	byInv, byRet := s.order()
	// Invocations before returns at equal times: a.ret < b.inv is strict.
	for len(byInv) > 0 || len(byRet) > 0 {
		if len(byRet) == 0 || len(byInv) > 0 && h.ops[byInv[0]].inv <= h.ops[byRet[0]].ret {
			s.invoked(byInv[0])
			byInv = byInv[1:]
		} else {
			s.returned(byRet[0])
			byRet = byRet[1:]
		}
	}
	s.rep.count(reads-strongReads, "W1", "W2")
	s.rep.count(strongReads, "C1")
	s.rep.count(reads, "W5", "C2")
	s.rep.count(reads+slotted, "W3", "W4")
}

func (s *sweep) invoked(i int32) {
	o := &s.h.ops[i]
	if snap := s.h.snap(i); !o.write && snap >= 0 && s.h.snaps[snap][0] != i {
		// A transaction's reads share their invocation, so their pasts
		// at it are alike; returned takes the first one's for all (a long
		// scan's thousand reads made a thousand copies).
		return
	}
	v := s.c.get()
	s.c.copy(v, s.sessAcc[o.sess])
	if o.strong && !s.noStrongRT {
		s.c.join(v, s.strong)
	}
	if !o.write {
		s.c.add(v, i) // a read's past is completed when it returns
		s.vcs[i] = v
		return
	}
	s.checkWrite(i, v)
	s.c.add(v, i)
	s.keepWritePast(i, v)
	s.c.put(v)
	if s.pending[i] == 0 {
		s.release(i)
	}
}

func (s *sweep) returned(i int32) {
	o := &s.h.ops[i]
	var v *vclock
	switch snap := s.h.snap(i); {
	case o.write:
		v = s.thaw(i)
	case snap >= 0:
		// A transaction's reads read one state, so each has in its past
		// what any of them read. They return together, the first of them
		// first (ties go by op), which takes all of them.
		ms := s.h.snaps[snap]
		if i != ms[0] {
			s.release(i)
			return
		}
		v = s.vcs[i]
		for _, m := range ms {
			s.observe(m, v)
		}
		for _, m := range ms {
			if s.h.ops[m].rf != thinAir {
				s.checkRead(m, v)
			}
		}
	default:
		v = s.vcs[i]
		s.observe(i, v)
		if o.rf != thinAir {
			s.checkRead(i, v)
		}
	}
	s.c.join(s.sessAcc[o.sess], v)
	if o.strong && !s.noStrongRT {
		s.c.join(s.strong, v)
	}
	s.release(i)
}

// observe adds to v what read r observed: the write it read, with that
// write's past and the writes it took effect with.
func (s *sweep) observe(r int32, v *vclock) {
	o := &s.h.ops[r]
	if o.rf < 0 {
		return
	}
	if o.future {
		s.c.add(v, o.rf)
	} else {
		if !s.closed || !s.c.holds(v, o.rf) {
			s.c.join(v, s.thaw(o.rf))
		}
		s.release(o.rf)
	}
	if g := s.h.grp(o.rf); g >= 0 {
		s.c.add(v, s.c.marker(g))
	}
}

// thaw returns write w's past, valid until the next thaw.
func (s *sweep) thaw(w int32) *vclock {
	s.c.thaw(s.thawed, s.writes[s.writeNo[w]].all, s.h.ops[w].inv)
	return s.thawed
}

func (s *sweep) release(i int32) {
	s.pending[i]--
	if s.pending[i] > 0 {
		return
	}
	if wn := s.writeNo[i]; wn >= 0 {
		s.writes[wn].all = nil
	} else if s.vcs[i] != nil {
		s.c.put(s.vcs[i])
		s.vcs[i] = nil
	}
}

// keepWritePast keeps write w's past v (w included), whole and restricted.
func (s *sweep) keepWritePast(w int32, v *vclock) {
	o := &s.h.ops[w]
	wp := &s.writes[s.writeNo[w]]
	wp.all = s.c.freeze(v, o.inv)
	kw := s.h.keys[o.key]
	wp.t = make([]int64, len(kw.writers))
	for j, sess := range kw.writers {
		wp.t[j] = v.t[sess]
	}
	grouped := false
	for _, m := range v.g {
		if x := s.c.onKey(m.op, o.key); x >= 0 {
			wp.g = append(wp.g, x)
			grouped = grouped || x != m.op
		}
	}
	if grouped {
		slices.Sort(wp.g)
		wp.g = slices.Compact(wp.g)
	}
}

// before reports w1 →co w2, for two writes on one key.
func (s *sweep) before(w1, w2 int32) bool {
	wp := &s.writes[s.writeNo[w2]]
	if w1 == w2 || wp.t == nil {
		return false
	}
	if s.h.ops[w1].ret < wp.t[s.h.ops[w1].wj] {
		return true
	}
	_, found := slices.BinarySearch(wp.g, w1)
	return found
}

// prefix returns how many of writer j's writes on the key are in v.
func (s *sweep) prefix(kw *keyWrites, j int, v *vclock) int {
	l, t := kw.lists[j], v.t[kw.writers[j]]
	return sort.Search(len(l), func(p int) bool { return s.h.ops[l[p]].ret >= t })
}

// checkWrite looks for a write in w's past logged after w (CyclicCF).
func (s *sweep) checkWrite(w int32, v *vclock) {
	o := &s.h.ops[w]
	if o.slot == 0 {
		return
	}
	kw := s.h.keys[o.key]
	bad := int32(-1)
	consider := func(x int32) {
		if x >= 0 && x != w && s.h.ops[x].slot > o.slot && (bad < 0 || s.h.ops[x].slot > s.h.ops[bad].slot) {
			bad = x
		}
	}
	for j := range kw.writers {
		if n := s.prefix(kw, j, v); n > 0 {
			consider(kw.argmax[j][n-1])
		}
	}
	for _, m := range v.g {
		consider(s.c.onKey(m.op, o.key))
	}
	if bad < 0 {
		return
	}
	b := &s.h.ops[bad]
	prop, how := "W4", "through another session"
	if b.sess == o.sess {
		prop, how = "W3", "in its own session"
	}
	s.rep.add(Violation{Property: prop, Ops: s.h.report(bad, w),
		Detail: fmt.Sprintf("CyclicCF: %v %v is logged at slot %d, before %v %v at slot %d, although %v is in its causal past (%s)",
			o.ev.Kind, s.h.name(w), o.slot, b.ev.Kind, s.h.name(bad), b.slot, s.h.name(bad), how)})
}

// witness is a write that makes a read stale, and the pattern it forms.
type witness struct {
	w       int32
	pattern string
}

func (s *sweep) checkRead(r int32, v *vclock) {
	o := &s.h.ops[r]
	kw := s.h.keys[o.key]
	if kw == nil {
		return // nothing was ever written to the key
	}
	var dels []candidate
	if o.rf == notFound {
		// Every write in its past would be a witness: first ask whether
		// there is one at all, which costs a look per writer rather than
		// per write.
		if !s.anyWrite(kw, o.key, v) {
			return
		}
		// A read that found nothing read the initial state or a delete
		// (one invoked before it returned): it is stale only if every one
		// of them is older than a write in its past. The delete it read
		// is not known, so its past is not joined into the read's: that
		// can hide a violation later, never invent one. The latest
		// deletes are tried first: they are the likeliest to explain it,
		// and have the fewest writes after them to test.
		n := sort.Search(len(kw.dels), func(p int) bool { return s.h.ops[kw.dels[p]].inv >= o.ret })
		for p := n - 1; p >= 0; p-- {
			d := kw.dels[p]
			wit := s.witnesses(kw, r, v, d)
			if len(wit) == 0 {
				return
			}
			dels = append(dels, candidate{d, wit})
		}
	}
	wit := s.witnesses(kw, r, v, o.rf)
	if len(wit) == 0 {
		return
	}
	if viol, ok := s.cls.stale(r, v, append([]candidate{{o.rf, wit}}, dels...)); ok {
		s.rep.add(viol)
	}
}

// anyWrite reports whether v holds a write on key, whose writes kw holds.
func (s *sweep) anyWrite(kw *keyWrites, key string, v *vclock) bool {
	for j := range kw.writers {
		if s.prefix(kw, j, v) > 0 {
			return true
		}
	}
	for _, m := range v.g {
		if s.c.onKey(m.op, key) >= 0 {
			return true
		}
	}
	return false
}

// witnesses returns the writes in read r's past v that are newer than w1,
// the write r read or notFound for the initial state.
func (s *sweep) witnesses(kw *keyWrites, r int32, v *vclock, w1 int32) []witness {
	o := &s.h.ops[r]
	var slot1 uint64
	if w1 >= 0 {
		slot1 = s.h.ops[w1].slot
	}
	var wit []witness
	consider := func(w2 int32) {
		switch {
		case w2 == w1 || !s.c.hasWrite(v, w2):
		case w1 == notFound:
			wit = append(wit, witness{w2, "WriteCOInitRead"})
		case slot1 != 0 && s.h.ops[w2].slot > slot1:
			wit = append(wit, witness{w2, "StaleLogRead"})
		case s.before(w1, w2):
			wit = append(wit, witness{w2, "WriteCORead"})
		}
	}
	// A write in r's past was invoked before r returned. One causally
	// after w1 was invoked after w1 was (its past was taken at its
	// invocation, and holds no future read); one logged after w1 has a
	// higher slot. A read that returned a recent value has few of either.
	ret := o.ret
	from := 0
	if w1 >= 0 {
		from = sort.Search(len(kw.byInv), func(p int) bool { return s.h.ops[kw.byInv[p]].inv > s.h.ops[w1].inv })
	}
	for _, w2 := range kw.byInv[from:] {
		if s.h.ops[w2].inv >= ret {
			break
		}
		consider(w2)
	}
	if slot1 != 0 {
		p := sort.Search(len(kw.bySlot), func(p int) bool { return s.h.ops[kw.bySlot[p]].slot > slot1 })
		for p = kw.slotInv.next(p, ret); p >= 0; p = kw.slotInv.next(p+1, ret) {
			if w2 := kw.bySlot[p]; s.h.ops[w2].inv <= s.h.ops[w1].inv {
				consider(w2) // the others were considered above
			}
		}
	}
	return wit
}
