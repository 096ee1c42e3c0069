package checker

import (
	"time"

	"github.com/hybridkv/hybridkv/internal/history"
)

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
	// HOEarlyVisibility allows a strong read to observe a weak write of
	// another session before it is committed (CURP-HO's exception to C3).
	HOEarlyVisibility bool
	// MaxPerProperty caps the violations kept per property, so a badly
	// broken run does not produce a report larger than its history; the
	// rest are only counted in Result.Omitted. 0 means 100; negative means
	// no cap.
	MaxPerProperty int
}

// Result is the outcome of a check.
type Result struct {
	Violations []Violation
	// Checked counts, per property, the operations (or replica states) the
	// property's check examined. Properties checked by the same pass share
	// a count.
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

// Clean reports whether the check ran to completion and found nothing.
func (r *Result) Clean() bool {
	return r.Err == nil && !r.S1Unknown && len(r.Violations) == 0 && len(r.Omitted) == 0
}

// Check verifies a recorded history against the guarantees S1, W1–W6,
// C1–C3, E1 and X1.
func Check(f *history.File, o Options) Result {
	start := time.Now()
	if o.LinearizabilityTimeout <= 0 {
		o.LinearizabilityTimeout = 10 * time.Second
	}
	if o.MaxPerProperty == 0 {
		o.MaxPerProperty = 100
	}
	rep := newReporter(o.MaxPerProperty)
	checkReplicas(f.Replicas, rep)
	log, err := decodeLog(f)
	if err != nil {
		return Result{Err: err, Duration: time.Since(start)}
	}
	checkAppliedLog(f, log, rep)
	h, err := index(f, rep)
	if err != nil {
		return Result{Err: err, Duration: time.Since(start)}
	}
	if len(log) > 0 {
		h.logged = firstLogged(log)
	}
	checkCycles(h, rep)
	checkCausal(h, rep)
	checkVisibility(h, o.HOEarlyVisibility, rep)
	s1Unknown := checkLinearizable(h, o, rep)
	return Result{
		Violations: rep.violations,
		Checked:    rep.checked,
		Omitted:    rep.omitted,
		Duration:   time.Since(start),
		S1Unknown:  s1Unknown,
	}
}

// reporter gathers violations and counts.
type reporter struct {
	max        int
	violations []Violation
	checked    map[string]int
	omitted    map[string]int
	kept       map[string]int
}

func newReporter(max int) *reporter {
	return &reporter{max: max, checked: map[string]int{}, omitted: map[string]int{}, kept: map[string]int{}}
}

func (r *reporter) add(v Violation) {
	if r.max >= 0 && r.kept[v.Property] >= r.max {
		r.omitted[v.Property]++
		return
	}
	r.kept[v.Property]++
	r.violations = append(r.violations, v)
}

func (r *reporter) count(n int, props ...string) {
	for _, p := range props {
		r.checked[p] += n
	}
}
