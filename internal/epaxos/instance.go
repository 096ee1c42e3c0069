package epaxos

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// instance is one instance as this replica knows it.
type instance struct {
	id     wire.Instance
	status wire.EStatus
	// bal is the highest ballot this replica promised for the instance;
	// vbal the ballot of its last pre-accept or accept (Sutra's fix: one
	// variable for both lets replicas disagree on a command's
	// dependencies).
	bal, vbal uint64
	// agreed: pre-accepted at ballot 0 with no dependency added to the
	// command leader's.
	agreed bool
	cmd    wire.Command
	deps   []wire.Instance
	// indexed: cmd is registered in the conflict index.
	indexed bool
	// coord is set while this replica drives the instance.
	coord *coordinator
	// fast: committed by this replica on the fast path.
	fast bool
	// visit is the executor's traversal state.
	visit visit
	// recoverAt is the tick at which this replica starts recovering the
	// instance unless it commits first; 0 while nothing here waits for it.
	recoverAt uint64
	// committedAt is the tick at which this replica learned the instance
	// committed (or loaded it committed), for the wait until it executes.
	committedAt uint64
}

// ballot builds the recovery ballot of replica id in round k ≥ 1. Ballot 0
// is the command leader's own.
func ballot(k uint64, id wire.NodeID) uint64 { return k<<8 | uint64(id) }

// nextBallot is the first ballot of replica id above b.
func nextBallot(b uint64, id wire.NodeID) uint64 { return ballot(b>>8+1, id) }

func sortInstances(is []wire.Instance) {
	slices.SortFunc(is, func(a, b wire.Instance) int { return a.Compare(b) })
}

// union merges sorted instance lists.
func union(a, b []wire.Instance) []wire.Instance {
	out := make([]wire.Instance, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Compare(b[j]) < 0:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Compare(a[i]) < 0:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// subset reports whether sorted list a is contained in sorted list b.
func subset(a, b []wire.Instance) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j].Compare(x) < 0 {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
	}
	return true
}
