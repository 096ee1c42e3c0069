package checker

import (
	"time"

	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
)

// Checkable is every guarantee the checker verifies: all but D1
// (durability), which a history cannot show directly (a lost write shows
// up as a stale read).
const Checkable = guarantees.All &^ guarantees.D1

// causalProps are the guarantees the causal sweep reports under (stale
// reads and CyclicCF).
const causalProps = guarantees.W1 | guarantees.W2 | guarantees.W3 | guarantees.W4 | guarantees.W5 |
	guarantees.C1 | guarantees.C2

// Options tune a check.
type Options struct {
	// LinearizabilityTimeout bounds porcupine's searches (the
	// visualization, and CrossCheck) over all keys together; 0 means 10 s.
	LinearizabilityTimeout time.Duration
	// CrossCheck also runs porcupine's general linearizability search on
	// every key and reports any disagreement with the cluster check that
	// decides S1. The search is exponential in the number of concurrent
	// ops on a key: meant for tests and small histories.
	CrossCheck bool
	// VisualizePath, when set, receives an HTML visualization of the
	// smallest failing part of every key that fails S1.
	VisualizePath string
	// Claims are what the protocol that ran promises (package
	// clientcores declares each protocol's; package protocols turns them
	// into Options): the check verifies exactly the claimed guarantees and
	// reports no violation of the others. The zero Set means every
	// guarantee (guarantees.All), so Options{} checks everything; a
	// protocol cannot claim nothing. With EarlyStrongVisibility, a strong
	// read may observe another session's weak write before it is committed
	// (CURP-HO's exception to C3). With WeakWritesMayBeLost, every weak
	// write is taken as of unknown outcome: an acknowledged one is owed
	// nothing. WeakWriteDurability is not used.
	Claims guarantees.Claims
	// MaxPerProperty caps the violations kept per property, so a badly
	// broken run does not produce a report larger than its history; the
	// rest are only counted in Result.Omitted. 0 means 100; negative means
	// no cap.
	MaxPerProperty int
}

// Result is the outcome of a check.
type Result struct {
	// Violations are the breaches found, of claimed guarantees only.
	Violations []Violation
	// Verified is what the check verified: the claimed guarantees it can
	// check (Checkable).
	Verified guarantees.Set
	// Unclaimed is what the protocol does not claim: never checked, never
	// reported.
	Unclaimed guarantees.Set
	// NotVerified is what the protocol claims beyond what the checker can
	// verify (D1, when claimed).
	NotVerified guarantees.Set
	// Checked counts, per verified property, the operations (or replica
	// states) the property's check examined. Properties checked by the
	// same pass share a count.
	Checked map[string]int
	// Omitted counts, per property, violations beyond MaxPerProperty.
	Omitted  map[string]int
	Duration time.Duration
	// S1Unknown: with CrossCheck, porcupine ran out of time on some key,
	// so the second opinion is missing there.
	S1Unknown bool
	// Err is set when the history cannot be checked at all (an event out
	// of range, two puts writing the same value to one key); nothing else
	// is then reported.
	Err error
}

// Scope says in one line what the check covered, for reports:
// "checked S1,W1,W2,W6,C1,C3,E1,X1; not claimed: W3,W4,W5,C2,D1", with
// "; claimed, not checked: D1" when the protocol claims D1.
func (r *Result) Scope() string {
	unclaimed := r.Unclaimed.String()
	if unclaimed == "" {
		unclaimed = "none"
	}
	s := "checked " + r.Verified.String() + "; not claimed: " + unclaimed
	if r.NotVerified != 0 {
		s += "; claimed, not checked: " + r.NotVerified.String()
	}
	return s
}

// Clean reports whether the check ran to completion and found nothing.
func (r *Result) Clean() bool {
	return r.Err == nil && !r.S1Unknown && len(r.Violations) == 0 && len(r.Omitted) == 0
}

// Check verifies a recorded history against the guarantees the protocol
// claims (Options.Claims; all of S1, W1–W6, C1–C3, E1 and X1 by default).
func Check(f *history.File, o Options) Result {
	start := time.Now()
	if o.LinearizabilityTimeout <= 0 {
		o.LinearizabilityTimeout = 10 * time.Second
	}
	if o.MaxPerProperty == 0 {
		o.MaxPerProperty = 100
	}
	claimed := o.Claims.Set & guarantees.All
	if claimed == 0 {
		claimed = guarantees.All
	}
	rep := newReporter(o.MaxPerProperty, claimed)
	res := func() Result {
		return Result{
			Verified:    claimed & Checkable,
			Unclaimed:   guarantees.All &^ claimed,
			NotVerified: claimed &^ Checkable,
			Duration:    time.Since(start),
		}
	}
	if claimed.Has(guarantees.E1) {
		checkReplicas(f.Replicas, rep)
	}
	log, err := decodeLog(f)
	if err != nil {
		r := res()
		r.Err = err
		return r
	}
	if claimed.Has(guarantees.X1) {
		checkAppliedLog(f, log, rep)
	}
	h, err := index(f, rep, o.Claims.WeakWritesMayBeLost)
	if err != nil {
		r := res()
		r.Err = err
		return r
	}
	if len(log) > 0 {
		h.logged = firstLogged(log)
	}
	if claimed&(guarantees.W5|guarantees.W6) != 0 {
		checkCycles(h, rep)
	}
	if claimed&causalProps != 0 {
		checkCausal(h, rep, o.Claims.NoStrongRealTime)
	}
	if claimed.Has(guarantees.C3) {
		checkVisibility(h, o.Claims.EarlyStrongVisibility, rep)
	}
	s1Unknown := false
	if claimed.Has(guarantees.S1) {
		s1Unknown = checkLinearizable(h, o, rep)
	}
	r := res()
	r.Violations, r.Checked, r.Omitted, r.S1Unknown = rep.violations, rep.checked, rep.omitted, s1Unknown
	return r
}

// reporter gathers the violations of the claimed guarantees, and counts.
type reporter struct {
	max        int
	claimed    guarantees.Set
	violations []Violation
	checked    map[string]int
	omitted    map[string]int
	kept       map[string]int
}

func newReporter(max int, claimed guarantees.Set) *reporter {
	return &reporter{max: max, claimed: claimed,
		checked: map[string]int{}, omitted: map[string]int{}, kept: map[string]int{}}
}

// claims reports whether the protocol claims property p ("W1"). A name
// the guarantees package does not know is taken as claimed: nothing is
// dropped by mistake.
func (r *reporter) claims(p string) bool {
	s, err := guarantees.Parse(p)
	return err != nil || r.claimed.Has(s)
}

// add keeps v if its property is claimed.
func (r *reporter) add(v Violation) {
	if !r.claims(v.Property) {
		return
	}
	if r.max >= 0 && r.kept[v.Property] >= r.max {
		r.omitted[v.Property]++
		return
	}
	r.kept[v.Property]++
	r.violations = append(r.violations, v)
}

// count counts n operations examined for each claimed property of props.
func (r *reporter) count(n int, props ...string) {
	for _, p := range props {
		if r.claims(p) {
			r.checked[p] += n
		}
	}
}
