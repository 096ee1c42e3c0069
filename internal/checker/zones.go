package checker

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// cluster is a put and the reads that returned its value.
type cluster struct {
	put      int32 // notFound for the virtual initial put
	f, s     int64 // earliest return, latest invocation
	fOp, sOp int32 // ops attaining f and s; -1 for the virtual put
	reads    bool
}

// zones decides whether one key's ops linearize, in O(n log n), using
// that every put writes a distinct value (Gibbons and Korach, "Testing
// shared memories", SIAM J. Comput. 1997).
//
// In any linearization of a register, a put and the reads that returned
// its value — its cluster — are contiguous, the put first. So the history
// linearizes exactly when no read returned before its put was invoked and
// the clusters can be ordered so that A comes before B whenever an op of A
// returned before an op of B was invoked, that is whenever f(A) < s(B).
// Reads that found nothing form the cluster of a virtual initial put, done
// before time began. That relation has a cycle exactly when it has one of
// length two, and a cluster with f < s (a forward zone [f, s]) can only be
// on one if it overlaps another forward zone or encloses the backward
// zone [s, f] of a cluster with s <= f.
//
// It returns nil when the key linearizes, else a violation naming the two
// clusters that must each precede the other and the ops that force it,
// together with every op of the two clusters: a failing history on its
// own, small enough to visualize.
func (l *lin) zones(key string, ops []int32) (*Violation, []int32) {
	h := l.h
	initial := &cluster{put: notFound, f: math.MinInt64, s: math.MinInt64, fOp: -1, sOp: -1}
	byPut := map[int32]*cluster{}
	for _, i := range ops {
		if h.ops[i].write {
			call, ret := l.interval(i)
			byPut[i] = &cluster{put: i, f: ret, s: call, fOp: i, sOp: i}
		}
	}
	for _, i := range ops {
		o := &h.ops[i]
		if o.write {
			continue
		}
		c := initial
		if o.rf >= 0 {
			c = byPut[o.rf]
			if w := &h.ops[o.rf]; o.ret < w.inv {
				return l.zoneViolation(key, []int32{i, o.rf}, []int32{i, o.rf},
					"%v returned %v's value before %v was invoked", h.name(i), h.name(o.rf), h.name(o.rf))
			}
		}
		c.reads = true
		if o.ret < c.f {
			c.f, c.fOp = o.ret, i
		}
		if o.inv > c.s {
			c.s, c.sOp = o.inv, i
		}
	}
	var forward, backward []*cluster
	if initial.reads {
		forward = append(forward, initial)
	}
	for _, i := range ops {
		if c := byPut[i]; c != nil {
			if c.f < c.s {
				forward = append(forward, c)
			} else {
				backward = append(backward, c)
			}
		}
	}
	slices.SortStableFunc(forward, func(a, b *cluster) int { return cmp.Compare(a.f, b.f) })
	// Forward zones must be disjoint: each starts after all earlier ones end.
	var widest *cluster
	for _, b := range forward {
		if widest != nil && b.f < widest.s {
			return l.cycle(key, widest, b, ops)
		}
		if widest == nil || b.s > widest.s {
			widest = b
		}
	}
	// Disjoint forward zones sorted by f are sorted by s too, so the one
	// that could enclose B is the last one starting before B.
	for _, b := range backward {
		p, _ := slices.BinarySearchFunc(forward, b.s, func(a *cluster, t int64) int {
			if a.f < t {
				return -1
			}
			return 1
		})
		if p > 0 && b.f < forward[p-1].s {
			return l.cycle(key, forward[p-1], b, ops)
		}
	}
	return nil, nil
}

// cycle explains why clusters a and b must each precede the other.
func (l *lin) cycle(key string, a, b *cluster, ops []int32) (*Violation, []int32) {
	h := l.h
	name := func(c *cluster) string {
		if c.put == notFound {
			return "the initial value"
		}
		return h.ops[c.put].ev.Kind.String() + " " + h.name(c.put)
	}
	// x's op returned before y's op was invoked, so x precedes y.
	because := func(x, y *cluster) string {
		if x.fOp < 0 {
			return fmt.Sprintf("%s precedes everything", name(x))
		}
		return fmt.Sprintf("%v returned before %v was invoked", h.name(x.fOp), h.name(y.sOp))
	}
	var evidence []int32
	for _, c := range []*cluster{a, b} {
		for _, i := range []int32{c.put, c.fOp, c.sOp} {
			if i >= 0 && !slices.Contains(evidence, i) {
				evidence = append(evidence, i)
			}
		}
	}
	var culprits []int32
	for _, i := range ops {
		o := &h.ops[i]
		for _, c := range []*cluster{a, b} {
			if (o.write && i == c.put) || (!o.write && o.rf == c.put) {
				culprits = append(culprits, i)
			}
		}
	}
	return l.zoneViolation(key, evidence, culprits,
		"%s and %s (each with the reads of its value) must each take effect before the other: %s, and %s",
		name(a), name(b), because(a, b), because(b, a))
}

func (l *lin) zoneViolation(key string, evidence, culprits []int32, format string, args ...any) (*Violation, []int32) {
	return &Violation{Property: "S1", Ops: l.h.report(evidence...), Detail: fmt.Sprintf("key %q: ", key) + fmt.Sprintf(format, args...)}, culprits
}
