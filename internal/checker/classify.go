package checker

import (
	"cmp"
	"fmt"
	"slices"
)

// classifier names the guarantee a stale read breaks. A stale read of r
// (it returned w1, or nothing, although w2 in its causal past is newer)
// breaks causal visibility (W5) in every case; it is reported under the
// most specific guarantee that explains how w2 reached r, tried in this
// order:
//
//	C1  r is strong, w2 a weak put of r's session before r
//	W1  r is weak, w2 a put of r's session before r
//	C2  w2 is a weak put of another session, followed in its session by
//	    a strong op that r observes
//	W3  w1 and w2 are puts of one session, w1 before w2
//	W2  r is weak and an earlier read of its session, on the same key,
//	    already returned w2 or another write newer than w1
//	W4  w1 is in w2's causal past (through another session's read)
//	W5  otherwise
//
// W1–W4 concern weak operations only; a strong read is C1, C2 or W5 (S1
// also covers it). Classification runs only for violations, so it can
// afford scans that the detection pass avoids.
type classifier struct {
	h      *hist
	c      *clocks
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

var rank = map[string]int{"C1": 0, "W1": 1, "C2": 2, "W3": 3, "W2": 4, "W4": 5, "W5": 6}

func (c *classifier) stale(r int32, v *vclock, wits []witness) Violation {
	var best witness
	prop, bestVia, bestWhy := "", int32(-1), ""
	for i, w := range wits {
		p, via, why := c.classify(r, v, w.w)
		if i == 0 || rank[p] < rank[prop] {
			best, prop, bestVia, bestWhy = w, p, via, why
		}
	}
	ro, w2 := &c.h.ops[r], &c.h.ops[best.w]
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
	ops = append(ops, best.w)
	if bestVia >= 0 {
		ops = append(ops, bestVia)
	}
	newer := ", newer,"
	if ro.rf < 0 {
		newer = ""
	}
	detail := fmt.Sprintf("%s: %v %s on key %q although %v %v%s is in its causal past",
		best.pattern, c.h.name(r), what, ro.key, w2.ev.Kind, c.h.name(best.w), newer)
	if bestWhy != "" {
		detail += "; " + bestWhy
	}
	if c.h.snap(r) >= 0 {
		detail += fmt.Sprintf("; the reads of txn %v read one state, so each has in its past what any of them read",
			c.h.parts[r].txn.ID())
	}
	if c.h.grp(best.w) >= 0 && !c.c.holds(v, best.w) {
		detail += fmt.Sprintf("; its past holds another write of txn %v, and a transaction's writes take effect together",
			c.h.parts[best.w].txn.ID())
	}
	return Violation{Property: prop, Ops: c.h.report(ops...), Detail: detail}
}

// classify returns the guarantee, an op that shows it (or -1) and why.
func (c *classifier) classify(r int32, v *vclock, w2 int32) (string, int32, string) {
	ro, wo := &c.h.ops[r], &c.h.ops[w2]
	if wo.sess == ro.sess && wo.ret < ro.inv {
		switch {
		case ro.strong && !wo.strong:
			return "C1", -1, fmt.Sprintf("a strong read missed its session's earlier weak %v", wo.ev.Kind)
		case !ro.strong:
			return "W1", -1, fmt.Sprintf("a read missed its session's earlier %v", wo.ev.Kind)
		}
	}
	if !wo.strong && wo.sess != ro.sess {
		if s := c.strongAfter(r, w2, v); s >= 0 {
			return "C2", s, fmt.Sprintf("the %v precedes strong op %v of its session, which the read observes", wo.ev.Kind, c.h.name(s))
		}
	}
	if ro.strong {
		return "W5", -1, ""
	}
	w1 := ro.rf
	if w1 >= 0 && c.h.ops[w1].sess == wo.sess && c.h.ops[w1].ret < wo.inv {
		return "W3", -1, "both writes are by one session, in that order"
	}
	if e := c.earlierRead(r, w2); e >= 0 {
		return "W2", e, fmt.Sprintf("the session's earlier read %v already returned a newer value", c.h.name(e))
	}
	if w1 >= 0 {
		return "W4", -1, fmt.Sprintf("put %v is in the causal past of %v %v", c.h.name(w1), wo.ev.Kind, c.h.name(w2))
	}
	return "W5", -1, ""
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
// returned w2 or a write newer than the one r returned.
func (c *classifier) earlierRead(r, w2 int32) int32 {
	c.build()
	ro := &c.h.ops[r]
	for _, e := range c.sessReads[sessKey{ro.sess, ro.key}] {
		eo := &c.h.ops[e]
		if eo.ret >= ro.inv {
			break
		}
		if eo.rf == w2 || (eo.rf >= 0 && c.newer(eo.rf, ro.rf)) {
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
