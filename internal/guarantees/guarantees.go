// Package guarantees names the consistency guarantees a hybridkv protocol
// can offer, so that each protocol declares the ones it claims (package
// clientcores) and the checker verifies exactly those on every checked
// run (package checker): a protocol may promise less than another, but
// never silently.
//
// The guarantees are the specification's:
//
//	S1  linearizability of strong operations and weak writes
//	W1  read-your-writes
//	W2  monotonic reads
//	W3  monotonic writes
//	W4  writes-follow-reads
//	W5  causal visibility
//	W6  no thin-air values
//	C1  same-session read-from (a strong op sees its session's weak writes)
//	C2  same-session causal delivery (whoever observes a session's strong
//	    op sees that session's earlier weak writes)
//	C3  cross-session visibility barrier (a weak write is visible to other
//	    sessions only once committed)
//	E1  convergence of replicas
//	D1  durability of acknowledged writes
//	X1  exactly-once application
//
// The package depends on the standard library alone: the client side
// (package clientcores) imports it.
package guarantees

import (
	"fmt"
	"math/bits"
	"strings"
)

// Set is a set of guarantees, one bit each. The zero Set is empty.
type Set uint16

// The guarantees, in canonical order.
const (
	S1 Set = 1 << iota
	W1
	W2
	W3
	W4
	W5
	W6
	C1
	C2
	C3
	E1
	D1
	X1

	// All holds every guarantee.
	All = S1 | W1 | W2 | W3 | W4 | W5 | W6 | C1 | C2 | C3 | E1 | D1 | X1
)

// names are the guarantees' names by bit, in canonical order.
var names = [...]string{"S1", "W1", "W2", "W3", "W4", "W5", "W6", "C1", "C2", "C3", "E1", "D1", "X1"}

// Has reports whether s holds every guarantee of p (true for an empty p).
func (s Set) Has(p Set) bool { return s&p == p }

// Len returns how many guarantees s holds.
func (s Set) Len() int { return bits.OnesCount16(uint16(s & All)) }

// Each returns the guarantees of s one by one, each as a Set of one, in
// canonical order.
func (s Set) Each() []Set {
	out := make([]Set, 0, s.Len())
	for i := range names {
		if p := Set(1) << i; s.Has(p) {
			out = append(out, p)
		}
	}
	return out
}

// String lists the guarantees of s in canonical order, separated by
// commas: "S1,W1,W2". It is "" for the empty Set; Parse reads it back.
func (s Set) String() string {
	var b strings.Builder
	for i, n := range names {
		if s&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
	}
	return b.String()
}

// Parse reads a comma-separated list of guarantee names, in any order and
// case, spaces around names allowed: "S1,W1,W2", "w2, s1". "all" stands for
// All; "" is the empty Set. An unknown or empty name is an error.
func Parse(text string) (Set, error) {
	if strings.TrimSpace(text) == "" {
		return 0, nil
	}
	var s Set
	for _, f := range strings.Split(text, ",") {
		name := strings.ToUpper(strings.TrimSpace(f))
		if name == "ALL" {
			s |= All
			continue
		}
		p, ok := lookup(name)
		if !ok {
			if name == "" {
				return 0, fmt.Errorf("guarantees %q: empty name", text)
			}
			return 0, fmt.Errorf("guarantees %q: unknown guarantee %q (have %s)", text, strings.TrimSpace(f), All)
		}
		s |= p
	}
	return s, nil
}

// lookup returns the guarantee called name (upper case).
func lookup(name string) (Set, bool) {
	for i, n := range names {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// Claims is what a protocol promises: the guarantees it claims, and how
// it meets the ones whose meaning it bends.
type Claims struct {
	// Set is the guarantees claimed. The checker verifies every one it can
	// (all but D1) and reports no violation of the others.
	Set Set
	// EarlyStrongVisibility is CURP-HO's exception to C3: a strong read may
	// observe another session's weak write before it is committed.
	EarlyStrongVisibility bool
	// WeakWriteDurability says in one line when an acknowledged weak write
	// is durable, for reports and documentation: "committed before
	// acknowledged".
	WeakWriteDurability string
	// WeakWritesMayBeLost: an acknowledged weak write may still be lost
	// (acknowledged by the leader once it logged it, before replication),
	// so the checker takes every weak write as of unknown outcome: it may
	// or may not have taken effect, and nothing is owed to it once
	// acknowledged.
	WeakWritesMayBeLost bool
	// NoStrongRealTime: real-time order between strong operations is not
	// part of causal order (EPaxos-HO, whose strong operations are ordered
	// only where they conflict). Causal order is then session order and
	// reads-from, as causal consistency defines it; strong operations stay
	// linearizable per key (S1). A weak read may miss another key's strong
	// write that completed before its session's last strong operation
	// began, unless its session read something that follows that write.
	NoStrongRealTime bool
}

// String is the claimed Set, with the C3 exception when there is one:
// "S1,W1,…,X1 (C3: strong reads may see weak writes early)".
func (c Claims) String() string {
	s := c.Set.String()
	if s == "" {
		s = "none"
	}
	if c.EarlyStrongVisibility {
		s += " (C3: strong reads may see weak writes early)"
	}
	if c.WeakWritesMayBeLost {
		s += " (acknowledged weak writes may be lost)"
	}
	if c.NoStrongRealTime {
		s += " (causal order without real time between strong operations)"
	}
	return s
}
