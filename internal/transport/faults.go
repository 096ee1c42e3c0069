package transport

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Direction says which frames of a link a fault rule affects, as seen from
// the node that holds the rule.
type Direction string

// The directions of a rule.
const (
	// Out: frames this node sends to the matched peers.
	Out Direction = "out"
	// In: frames this node receives from the matched peers.
	In Direction = "in"
	// Both: either way.
	Both Direction = "both"
)

// Rule is one injected fault on the links to some peers. A rule with Drop 1
// is a blackhole: the TCP connection stays up and silent, as behind a
// broken switch, rather than being reset, so the protocols see lost
// messages and not a closed socket they would reconnect around.
type Rule struct {
	// Peers are the node IDs the rule applies to; Sites the sites. A peer
	// matches if it is listed in either; with both empty every peer does.
	Peers []uint64 `json:"peers,omitempty"`
	Sites []uint32 `json:"sites,omitempty"`
	// Dir is the direction; empty means both.
	Dir Direction `json:"dir,omitempty"`
	// Drop is the fraction of frames dropped, in [0, 1].
	Drop float64 `json:"drop,omitempty"`
	// DelayMs and JitterMs hold outgoing frames back by a further DelayMs
	// plus a uniform draw from [-JitterMs, +JitterMs]. Delay is applied on
	// the sending side only, as the emulated wide-area delay is, so a rule
	// that delays must have direction out; to slow a link both ways, give
	// both ends a rule.
	DelayMs  float64 `json:"delay_ms,omitempty"`
	JitterMs float64 `json:"jitter_ms,omitempty"`
}

// RuleSet is the complete set of faults in force on one node.
type RuleSet struct {
	Rules []Rule `json:"rules"`
	// Seed fixes the draws that decide which frames a fractional Drop
	// loses and how much jitter each gets.
	Seed uint64 `json:"seed,omitempty"`
}

func (r *Rule) dir() Direction {
	if r.Dir == "" {
		return Both
	}
	return r.Dir
}

func (r *Rule) validate() error {
	switch r.dir() {
	case Out, In, Both:
	default:
		return fmt.Errorf("rule direction %q: want out, in or both", r.Dir)
	}
	switch {
	case !(r.Drop >= 0 && r.Drop <= 1):
		return fmt.Errorf("rule drop %v: want a fraction in [0, 1]", r.Drop)
	case !(r.DelayMs >= 0) || !(r.JitterMs >= 0):
		return errors.New("rule delay_ms and jitter_ms must not be negative")
	case (r.DelayMs > 0 || r.JitterMs > 0) && r.dir() != Out:
		return errors.New("a rule that delays frames must have dir \"out\": delay is applied by the sender; give the other end its own rule")
	case r.Drop == 0 && r.DelayMs == 0 && r.JitterMs == 0:
		return errors.New("rule neither drops nor delays anything")
	}
	return nil
}

// Faults holds the fault rules of one transport. It can be shared with
// whoever controls them at run time; the zero value has no faults. Its
// methods are safe for concurrent use.
type Faults struct {
	// cur is nil when no rule is in force, so a healthy transport pays one
	// atomic load per send and per received frame.
	cur atomic.Pointer[faultState]
}

// faultState is an immutable rule set plus the random sequence its draws
// come from.
type faultState struct {
	set RuleSet
	rng atomic.Uint64 // splitmix64 state
}

// Set replaces the rules in force; an empty set heals every link.
func (f *Faults) Set(rs RuleSet) error {
	for i := range rs.Rules {
		if err := rs.Rules[i].validate(); err != nil {
			return fmt.Errorf("rule %d: %w", i, err)
		}
	}
	if len(rs.Rules) == 0 {
		f.cur.Store(nil)
		return nil
	}
	st := &faultState{set: RuleSet{Rules: slices.Clone(rs.Rules), Seed: rs.Seed}}
	st.rng.Store(rs.Seed)
	f.cur.Store(st)
	return nil
}

// Clear heals every link.
func (f *Faults) Clear() { f.cur.Store(nil) }

// Rules returns the rules in force.
func (f *Faults) Rules() RuleSet {
	if st := f.cur.Load(); st != nil {
		return st.set
	}
	return RuleSet{Rules: []Rule{}}
}

// state returns the rules in force, nil when there are none.
func (f *Faults) state() *faultState { return f.cur.Load() }

func (r *Rule) matches(node wire.NodeID, site uint32) bool {
	if len(r.Peers) == 0 && len(r.Sites) == 0 {
		return true
	}
	return slices.Contains(r.Peers, uint64(node)) || slices.Contains(r.Sites, site)
}

// outgoing decides the fate of one frame to node at site: dropped, or held
// back by extra.
func (st *faultState) outgoing(node wire.NodeID, site uint32) (drop bool, extra time.Duration) {
	for i := range st.set.Rules {
		r := &st.set.Rules[i]
		if r.dir() == In || !r.matches(node, site) {
			continue
		}
		if st.lose(r.Drop) {
			return true, 0
		}
		extra += st.delay(r)
	}
	return false, extra
}

// incoming reports whether a frame received from node at site is dropped.
func (st *faultState) incoming(node wire.NodeID, site uint32) bool {
	for i := range st.set.Rules {
		r := &st.set.Rules[i]
		if r.dir() != Out && r.matches(node, site) && st.lose(r.Drop) {
			return true
		}
	}
	return false
}

func (st *faultState) lose(p float64) bool {
	switch {
	case p <= 0:
		return false
	case p >= 1:
		return true
	}
	return float64(st.next()>>11)/(1<<53) < p
}

func (st *faultState) delay(r *Rule) time.Duration {
	base := time.Duration(r.DelayMs * float64(time.Millisecond))
	jitter := time.Duration(r.JitterMs * float64(time.Millisecond))
	if jitter <= 0 {
		return base
	}
	v := base + time.Duration(st.next()%uint64(2*jitter+1)) - jitter
	return max(v, 0)
}

// next returns the following splitmix64 output.
func (st *faultState) next() uint64 { return splitmix64(&st.rng) }
