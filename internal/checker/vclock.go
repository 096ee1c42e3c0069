package checker

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
)

// vclock is a causal past, one entry per session. Session order is an
// interval order (a precedes b when a returned before b was invoked), and
// a set of a session's ops closed under it is exactly
//
//	{a : a.ret < T} ∪ G
//
// where T is the latest invocation among the ops that generated the set
// and G holds the generators that returned at or after T (in flight at T,
// or of unknown outcome). So t[s] = T, and g collects every session's G.
//
// The checks only ask which writes are in a past, so g keeps writes only:
// a read's contribution is its own past, already joined, and its T. With
// a session pipelining at most p ops, g holds at most p writes per
// session, and a join costs O(sessions + |g|).
//
// The writes of a transaction's branch take effect together, so a read of
// one brings them all into the reader's past. g holds them as one member,
// the group's marker (an index past the ops, see clocks.marker), which
// shares their session and interval: a past holds a write when it holds
// its group's marker.
type vclock struct {
	t []int64
	g []member // sorted by op
}

// member is a write in g, or a group's marker, with what filtering needs
// kept at hand.
type member struct {
	op   int32
	sess int32
	ret  int64
}

const nothing = math.MinInt64 // t value of a session with no op in the past

// clocks allocates vclocks for one history and recycles them: at any time
// only the clocks of ops in flight and of writes still to be read are live.
type clocks struct {
	ops     []op
	n       int
	h       *hist // for groups
	free    []*vclock
	scratch []member
}

// marker is group g's member in a g list.
func (c *clocks) marker(g int32) int32 { return int32(len(c.ops)) + g }

// standIn returns the op a member of g stands for: x itself, or for a
// group's marker one of its writes, which all share a session, an
// interval, a level and an outcome.
func (c *clocks) standIn(x int32) int32 {
	if n := int32(len(c.ops)); x >= n {
		return c.h.groups[x-n].members[0]
	}
	return x
}

func (c *clocks) at(x int32) *op { return &c.ops[c.standIn(x)] }

// onKey returns the write on key that member x of g stands for, or -1.
func (c *clocks) onKey(x int32, key string) int32 {
	if n := int32(len(c.ops)); x >= n {
		return c.h.member(x-n, key)
	}
	if c.ops[x].key == key {
		return x
	}
	return -1
}

// get returns a clock with arbitrary contents, to be overwritten by copy.
func (c *clocks) get() *vclock {
	if k := len(c.free); k > 0 {
		v := c.free[k-1]
		c.free = c.free[:k-1]
		return v
	}
	return &vclock{t: make([]int64, c.n)}
}

// empty returns a clock holding nothing.
func (c *clocks) empty() *vclock {
	v := c.get()
	for i := range v.t {
		v.t[i] = nothing
	}
	v.g = v.g[:0]
	return v
}

func (c *clocks) put(v *vclock) { c.free = append(c.free, v) }

func (c *clocks) copy(dst, src *vclock) {
	copy(dst.t, src.t)
	dst.g = append(dst.g[:0], src.g...)
}

// join makes dst the union of dst and src.
func (c *clocks) join(dst, src *vclock) {
	raised := false
	for i, t := range src.t {
		if t > dst.t[i] {
			dst.t[i] = t
			raised = true
		}
	}
	if len(src.g) == 0 {
		if raised {
			dst.g = slices.DeleteFunc(dst.g, func(m member) bool { return m.ret < dst.t[m.sess] })
		}
		return
	}
	m := c.scratch[:0]
	a, b := dst.g, src.g
	for len(a) > 0 || len(b) > 0 {
		var x member
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].op < b[0].op):
			x, a = a[0], a[1:]
		case len(a) == 0 || b[0].op < a[0].op:
			x, b = b[0], b[1:]
		default:
			x, a, b = a[0], a[1:], b[1:]
		}
		if x.ret >= dst.t[x.sess] {
			m = append(m, x)
		}
	}
	dst.g = append(dst.g[:0], m...)
	c.scratch = m
}

// add puts op x (or a group's marker) and its session predecessors into v.
func (c *clocks) add(v *vclock, x int32) {
	o := c.at(x)
	if o.inv > v.t[o.sess] {
		v.t[o.sess] = o.inv
		v.g = slices.DeleteFunc(v.g, func(m member) bool { return m.sess == o.sess && m.ret < o.inv })
	}
	if o.write && o.ret >= v.t[o.sess] {
		i, found := slices.BinarySearchFunc(v.g, x, func(m member, x int32) int { return cmp.Compare(m.op, x) })
		if !found {
			v.g = slices.Insert(v.g, i, member{op: x, sess: o.sess, ret: o.ret})
		}
	}
}

// hasWrite reports whether write x is in v, itself or by its group.
func (c *clocks) hasWrite(v *vclock, x int32) bool {
	if c.holds(v, x) {
		return true
	}
	g := c.h.grp(x)
	return g >= 0 && c.inG(v, c.marker(g))
}

// holds reports whether write x is in v as itself, not by its group.
func (c *clocks) holds(v *vclock, x int32) bool {
	return c.ops[x].ret < v.t[c.ops[x].sess] || c.inG(v, x)
}

func (c *clocks) inG(v *vclock, x int32) bool {
	_, found := slices.BinarySearchFunc(v.g, x, func(m member, x int32) int { return cmp.Compare(m.op, x) })
	return found
}

// frozen is a vclock that will not change again, encoded: a write's past
// stays live until its last reader returns, which under a skewed key
// choice is most of a long run, and a live vclock of a pipelining history
// holds hundreds of in-flight writes (16 bytes each) besides its S words.
// Encoded, each t entry is its distance below the write's invocation and
// each g member its distance from the previous one (members are sorted,
// and in-flight writes are close together in a history), its session and
// return time looked up again from the ops: a few bytes where the vclock
// holds 8 and 16. Checking a 60 s history of 4.87 million operations
// (96 sessions, 15 in flight each) peaked at 4.5 GB of heap so, 10.2 GB
// with live vclocks.
type frozen []byte

// freeze encodes v, whose t entries are at most at.
func (c *clocks) freeze(v *vclock, at int64) frozen {
	b := make([]byte, 0, len(v.t)*3+len(v.g)*2+binary.MaxVarintLen32)
	for _, t := range v.t {
		if t == nothing {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, zigzag(at-t)+1)
	}
	b = binary.AppendUvarint(b, uint64(len(v.g)))
	prev := int32(0)
	for _, m := range v.g {
		b = binary.AppendUvarint(b, uint64(m.op-prev))
		prev = m.op
	}
	return frozen(slices.Clip(b))
}

// thaw decodes f, frozen at at, into dst.
func (c *clocks) thaw(dst *vclock, f frozen, at int64) {
	for i := range dst.t {
		u, n := binary.Uvarint(f)
		f = f[n:]
		if u == 0 {
			dst.t[i] = nothing
			continue
		}
		dst.t[i] = at - unzigzag(u-1)
	}
	k, n := binary.Uvarint(f)
	f = f[n:]
	dst.g = dst.g[:0]
	op := int32(0)
	for range k {
		d, n := binary.Uvarint(f)
		f = f[n:]
		op += int32(d)
		o := c.at(op)
		dst.g = append(dst.g, member{op: op, sess: o.sess, ret: o.ret})
	}
}

func zigzag(x int64) uint64   { return uint64(x<<1) ^ uint64(x>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
