package checker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hybridkv/hybridkv/internal/history"
)

// checkReplicas checks E1: replicas that applied the same prefix of the
// log must hold the same state. Replicas at different applied indexes are
// not compared; a run that wants all of them compared must quiesce first.
func checkReplicas(rs []history.ReplicaState, rep *reporter) {
	rep.count(len(rs), "E1")
	byApplied := map[uint64][]history.ReplicaState{}
	for _, r := range rs {
		byApplied[r.Applied] = append(byApplied[r.Applied], r)
	}
	applied := make([]uint64, 0, len(byApplied))
	for a := range byApplied {
		applied = append(applied, a)
	}
	slices.Sort(applied)
	for _, a := range applied {
		group := byApplied[a]
		if !slices.ContainsFunc(group, func(r history.ReplicaState) bool { return r.Digest != group[0].Digest }) {
			continue
		}
		var desc []string
		for _, r := range group {
			desc = append(desc, fmt.Sprintf("replica %d digest %#x", r.ID, r.Digest))
		}
		rep.add(Violation{Property: "E1",
			Detail: fmt.Sprintf("replicas that applied the log up to slot %d differ: %s", a, strings.Join(desc, ", "))})
	}
}
