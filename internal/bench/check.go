package bench

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hybridkv/hybridkv/internal/checker"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/protocol"
)

// Verdict is the consistency check of one run.
type Verdict struct {
	HistoryPath string
	Events      int
	Result      checker.Result
}

// Clean reports whether the run passed every check.
func (v *Verdict) Clean() bool { return v != nil && v.Result.Clean() }

// Summary is one line for the report. It names the guarantees checked
// (the protocol's claims) and those the protocol does not claim.
func (v *Verdict) Summary() string {
	r := &v.Result
	switch {
	case r.Err != nil:
		return fmt.Sprintf("check: history of %d operations could not be checked: %v", v.Events, r.Err)
	case r.Clean():
		return fmt.Sprintf("check: clean — %d operations; %s; in %v (history %s)",
			v.Events, r.Scope(), r.Duration.Round(time.Millisecond), v.HistoryPath)
	}
	n := len(r.Violations)
	for _, k := range r.Omitted {
		n += k
	}
	first := ""
	if len(r.Violations) > 0 {
		first, _, _ = strings.Cut(r.Violations[0].String(), "\n")
		first = "; first: " + first
	}
	return fmt.Sprintf("check: %d VIOLATIONS in %d operations (%s)%s (all in %s, history %s)",
		n, v.Events, r.Scope(), first, violationsPath(v.HistoryPath), v.HistoryPath)
}

// violationsPath is where a run's violations are written in full.
func violationsPath(history string) string {
	return strings.TrimSuffix(history, ".history") + "-violations.txt"
}

// check writes the run's history with the replicas' final states and runs
// the checker over it, against what the run's protocol claims.
func (r *run) check(h *historyFile, states []protocol.Status) (*Verdict, error) {
	for _, st := range states {
		h.rec.AddReplica(history.ReplicaState{ID: uint64(st.ID), Applied: st.Applied, Digest: st.Digest})
	}
	if err := h.finish(); err != nil {
		return nil, err
	}
	path := r.opts.HistoryPath
	f, err := history.ReadFile(path)
	if err != nil {
		return nil, err
	}
	opts := r.proto.CheckOptions()
	opts.VisualizePath = strings.TrimSuffix(path, ".history") + "-s1.html"
	res := checker.Check(f, opts)
	v := &Verdict{HistoryPath: path, Events: len(f.Events), Result: res}
	if len(res.Violations) > 0 {
		var b strings.Builder
		for _, viol := range res.Violations {
			fmt.Fprintln(&b, viol.String())
		}
		if err := os.WriteFile(violationsPath(path), []byte(b.String()), 0o644); err != nil {
			return v, err
		}
	}
	return v, nil
}
