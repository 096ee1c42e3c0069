package checker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hybridkv/hybridkv/internal/guarantees"
)

// classifier names the guarantee a stale read breaks, among those the
// protocol claims. A stale read r (it returned w1, or nothing, although w2
// in its causal past is newer) breaks causal visibility (W5) in every
// case; how w2 reached r may show a more specific guarantee broken as
// well. Each pattern below is a test of its own:
//
//	C1  r is strong, w2 a weak write of r's session before r
//	W1  r is weak, w2 a write of r's session before r
//	C2  w2 is a weak write of another session, followed in its session by
//	    a strong op that r observes
//	W3  r is weak, w1 and w2 are writes of one session, w1 before w2
//	W2  r is weak and an earlier read of its session, on the same key,
//	    already returned w2 or another write newer than w1
//	W4  r is weak and w1 is in w2's causal past, other than as W3's
//	    session order puts it there (through another session's read)
//	W5  any stale read
//
// The read is reported under the first pattern, in this order, that the
// protocol claims and that some witness w2 matches; when none does, it
// breaks nothing the protocol claims and is not reported (with W5
// claimed, every stale read is). W1–W4 concern weak reads only; a strong
// read is C1, C2 or W5 (S1 also covers it).
//
// A read that found nothing read the initial state or one of its key's
// deletes invoked before it returned, and which one is not known: it is
// stale when each of these candidates is older than some write in its
// past, and matches a pattern when the pattern matches for each
// candidate taken as w1, with some witness of that candidate. That can
// hide a read that only different patterns explain for different
// candidates (W5 still catches it), never invent one.
//
// Classification runs only for stale reads, so it can afford scans that
// the detection pass avoids.
type classifier struct {
	h      *hist
	c      *clocks
	claims guarantees.Set
	before func(w1, w2 int32) bool // w1 →co w2, for writes on one key
	// Built on first use: per session, ops by return time; per session and
	// key, reads by return time.
	bySess    [][]int32
	sessReads map[sessKey][]int32
}

// sessKey names a session's reads of one key.
type sessKey struct {
	sess int32
	key  string
}

// candidate is what a stale read may have read, w1 (a write, or notFound
// for the initial state), with its witnesses: the writes in the read's
// past newer than w1.
type candidate struct {
	w1   int32
	wits []witness
}

// pattern is one way a stale read breaks a guarantee. test reports
// whether read r, which read w1 although w2 is in its past v and newer,
// matches it, with an op that shows it (or -1) and why.
type pattern struct {
	prop  string
	claim guarantees.Set
	test  func(c *classifier, r int32, v *vclock, w1, w2 int32) (bool, int32, string)
}

// patterns in the order they are tried: the most specific first.
var patterns = [...]pattern{
	{"C1", guarantees.C1, (*classifier).ownWeakWriteMissed},
	{"W1", guarantees.W1, (*classifier).ownWriteMissed},
	{"C2", guarantees.C2, (*classifier).strongFollowerObserved},
	{"W3", guarantees.W3, (*classifier).sessionWritesReversed},
	{"W2", guarantees.W2, (*classifier).earlierReadNewer},
	{"W4", guarantees.W4, (*classifier).readWriteFollowed},
	{"W5", guarantees.W5, (*classifier).anyStale},
}

// match is a witness that matched a pattern, an op that shows it (or -1)
// and why.
type match struct {
	wit witness
	via int32
	why string
}

// stale returns the violation stale read r commits, having read one of
// cands (the first is what the report names: the write r returned, or the
// initial state), or false when no pattern the protocol claims explains
// it.
func (c *classifier) stale(r int32, v *vclock, cands []candidate) (Violation, bool) {
	for i := range patterns {
		p := &patterns[i]
		if !c.claims.Has(p.claim) {
			continue
		}
		if m, ok := c.explain(p, r, v, cands); ok {
			return c.violation(p.prop, r, v, m), true
		}
	}
	return Violation{}, false
}

// explain reports whether p matches every candidate with some witness of
// it, and returns the first candidate's match: when r found nothing, a
// put's if one matches (a delete in r's past does not make finding
// nothing stale by itself).
func (c *classifier) explain(p *pattern, r int32, v *vclock, cands []candidate) (match, bool) {
	var first match
	preferPuts := c.h.ops[r].rf == notFound
	for i, cd := range cands {
		found := false
		for _, w := range cd.wits {
			ok, via, why := p.test(c, r, v, cd.w1, w.w)
			if !ok {
				continue
			}
			if i == 0 && (!found || c.h.ops[first.wit.w].del && !c.h.ops[w.w].del) {
				first = match{w, via, why}
			}
			found = true
			if i > 0 || !preferPuts || !c.h.ops[w.w].del {
				break
			}
		}
		if !found {
			return match{}, false
		}
	}
	return first, true
}

// violation describes stale read r under prop, as m shows it.
func (c *classifier) violation(prop string, r int32, v *vclock, m match) Violation {
	ro, w2 := &c.h.ops[r], &c.h.ops[m.wit.w]
	ops := []int32{r}
	var what string
	if ro.rf >= 0 {
		ops = append(ops, ro.rf)
		what = fmt.Sprintf("read %v's value", c.h.name(ro.rf))
	} else {
		what = "found nothing"
		if kw := c.h.keys[ro.key]; kw != nil && len(kw.dels) > 0 {
			what += ", which no delete explains,"
		}
	}
	ops = append(ops, m.wit.w)
	if m.via >= 0 {
		ops = append(ops, m.via)
	}
	newer := ", newer,"
	if ro.rf < 0 {
		newer = ""
	}
	detail := fmt.Sprintf("%s: %v %s on key %q although %v %v%s is in its causal past",
		m.wit.pattern, c.h.name(r), what, ro.key, w2.ev.Kind, c.h.name(m.wit.w), newer)
	if m.why != "" {
		detail += "; " + m.why
	}
	if c.h.snap(r) >= 0 {
		detail += fmt.Sprintf("; the reads of %s read one state, so each has in its past what any of them read",
			programName(c.h.parts[r].txn))
	}
	if c.h.grp(m.wit.w) >= 0 && !c.c.holds(v, m.wit.w) {
		detail += fmt.Sprintf("; its past holds another write of txn %v, and a transaction's writes take effect together",
			c.h.parts[m.wit.w].txn.ID())
	}
	return Violation{Property: prop, Ops: c.h.report(ops...), Detail: detail}
}

// ownWeakWriteMissed is C1: a strong read missed a weak write its session
// made before it.
func (c *classifier) ownWeakWriteMissed(r int32, _ *vclock, _, w2 int32) (bool, int32, string) {
	ro, wo := &c.h.ops[r], &c.h.ops[w2]
	if ro.strong && !wo.strong && wo.sess == ro.sess && wo.ret < ro.inv {
		return true, -1, fmt.Sprintf("a strong read missed its session's earlier weak %v", wo.ev.Kind)
	}
	return false, -1, ""
}

// ownWriteMissed is W1: a weak read missed a write its session made before
// it.
func (c *classifier) ownWriteMissed(r int32, _ *vclock, _, w2 int32) (bool, int32, string) {
	ro, wo := &c.h.ops[r], &c.h.ops[w2]
	if !ro.strong && wo.sess == ro.sess && wo.ret < ro.inv {
		return true, -1, fmt.Sprintf("a read missed its session's earlier %v", wo.ev.Kind)
	}
	return false, -1, ""
}

// strongFollowerObserved is C2: w2 is another session's weak write, and r
// observes a strong op its session made after it.
func (c *classifier) strongFollowerObserved(r int32, v *vclock, _, w2 int32) (bool, int32, string) {
	ro, wo := &c.h.ops[r], &c.h.ops[w2]
	if wo.strong || wo.sess == ro.sess {
		return false, -1, ""
	}
	if s := c.strongAfter(r, w2, v); s >= 0 {
		return true, s, fmt.Sprintf("the %v precedes strong op %v of its session, which the read observes", wo.ev.Kind, c.h.name(s))
	}
	return false, -1, ""
}

// sessionWritesReversed is W3: a weak read returned w1 although w2, which
// w1's session wrote after it, is in its past.
func (c *classifier) sessionWritesReversed(r int32, _ *vclock, w1, w2 int32) (bool, int32, string) {
	if c.h.ops[r].strong || !c.ordered(w1, w2) {
		return false, -1, ""
	}
	return true, -1, "both writes are by one session, in that order"
}

// ordered reports whether writes w1 and w2 are of one session, w1 before
// w2; false when w1 is the initial state.
func (c *classifier) ordered(w1, w2 int32) bool {
	return w1 >= 0 && c.h.ops[w1].sess == c.h.ops[w2].sess && c.h.ops[w1].ret < c.h.ops[w2].inv
}

// earlierReadNewer is W2: an earlier read of the weak read's session, on
// its key, returned w2 or another write newer than w1.
func (c *classifier) earlierReadNewer(r int32, _ *vclock, w1, w2 int32) (bool, int32, string) {
	if c.h.ops[r].strong {
		return false, -1, ""
	}
	if e := c.earlierRead(r, w1, w2); e >= 0 {
		return true, e, fmt.Sprintf("the session's earlier read %v already returned a newer value", c.h.name(e))
	}
	return false, -1, ""
}

// readWriteFollowed is W4: a weak read returned w1 although w2, which
// follows w1 causally other than by one session's order (which is W3's),
// is in its past.
func (c *classifier) readWriteFollowed(r int32, _ *vclock, w1, w2 int32) (bool, int32, string) {
	if c.h.ops[r].strong || w1 < 0 || c.ordered(w1, w2) || !c.before(w1, w2) {
		return false, -1, ""
	}
	return true, -1, fmt.Sprintf("%v %v is in the causal past of %v %v",
		c.h.ops[w1].ev.Kind, c.h.name(w1), c.h.ops[w2].ev.Kind, c.h.name(w2))
}

// anyStale is W5: every stale read breaks causal visibility.
func (c *classifier) anyStale(int32, *vclock, int32, int32) (bool, int32, string) {
	return true, -1, ""
}

func (c *classifier) build() {
	if c.bySess != nil {
		return
	}
	c.bySess = make([][]int32, c.h.sessions)
	c.sessReads = map[sessKey][]int32{}
	for i := range c.h.ops {
		o := &c.h.ops[i]
		c.bySess[o.sess] = append(c.bySess[o.sess], int32(i))
		if !o.write && o.rf != thinAir {
			k := sessKey{o.sess, o.key}
			c.sessReads[k] = append(c.sessReads[k], int32(i))
		}
	}
	byRet := func(a, b int32) int { return cmp.Compare(c.h.ops[a].ret, c.h.ops[b].ret) }
	for _, l := range c.bySess {
		slices.SortFunc(l, byRet)
	}
	for _, l := range c.sessReads {
		slices.SortFunc(l, byRet)
	}
}

// strongAfter returns a strong op of w's session after w that r observes.
// Ops are scanned by return time from w's return, only as far as r's
// past can cover them by its t entry (or, for a strong r, by real time);
// strong writes known to r beyond that are in its g.
func (c *classifier) strongAfter(r, w int32, v *vclock) int32 {
	c.build()
	wo, ro := &c.h.ops[w], &c.h.ops[r]
	horizon := v.t[wo.sess]
	if ro.strong {
		horizon = max(horizon, ro.inv)
	}
	l := c.bySess[wo.sess]
	p, _ := slices.BinarySearchFunc(l, wo.ret, func(x int32, t int64) int {
		if c.h.ops[x].ret <= t {
			return -1
		}
		return 1
	})
	for _, x := range l[p:] {
		xo := &c.h.ops[x]
		if xo.ret >= horizon {
			break
		}
		if xo.strong && xo.ok && xo.inv > wo.ret && c.observes(r, v, x) {
			return x
		}
	}
	for _, m := range v.g {
		if x := c.c.standIn(m.op); m.sess == wo.sess && c.h.ops[x].strong && c.h.ops[x].ok && c.h.ops[x].inv > wo.ret {
			return x
		}
	}
	return -1
}

// earlierRead returns a read of r's session on r's key, before r, that
// returned w2 or a write newer than w1, what r read.
func (c *classifier) earlierRead(r, w1, w2 int32) int32 {
	c.build()
	ro := &c.h.ops[r]
	for _, e := range c.sessReads[sessKey{ro.sess, ro.key}] {
		eo := &c.h.ops[e]
		if eo.ret >= ro.inv {
			break
		}
		if eo.rf == w2 || (eo.rf >= 0 && eo.rf != w1 && c.newer(eo.rf, w1)) {
			return e
		}
	}
	return -1
}

// newer reports whether write a is newer than b (a write, or notFound):
// later in the log, or causally after.
func (c *classifier) newer(a, b int32) bool {
	if b == notFound {
		return true
	}
	sa, sb := c.h.ops[a].slot, c.h.ops[b].slot
	if sa != 0 && sb != 0 {
		return sa > sb
	}
	return c.before(b, a)
}

// observes reports whether op x is in r's causal past v. Clocks list only
// writes beyond their t entries, so a read x counts when v covers it, or
// when both are strong and x returned before r began; a read reaching r
// otherwise (read by nobody, observed through a later strong op of
// another session) is missed, and the violation is reported as W5.
func (c *classifier) observes(r int32, v *vclock, x int32) bool {
	xo, ro := &c.h.ops[x], &c.h.ops[r]
	if xo.write {
		return c.c.hasWrite(v, x)
	}
	return xo.ret < v.t[xo.sess] || (xo.strong && ro.strong && xo.ret < ro.inv)
}
