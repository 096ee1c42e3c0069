package checker

import (
	"fmt"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// firstLogIndex is the index of History.Log's first entry: a new cluster's
// log starts with a snapshot just before it that holds no state.
const firstLogIndex = raftlog.FirstEntry

// decodeLog decodes the run's committed log: the request each entry
// holds, nil for a clock entry or an empty one.
func decodeLog(f *history.File) ([]*wire.Request, error) {
	reqs := make([]*wire.Request, len(f.Log))
	for i, data := range f.Log {
		if len(data) == 0 {
			continue
		}
		m, err := wire.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("checker: log entry %d: %w", firstLogIndex+uint64(i), err)
		}
		req, ok := m.(*wire.Request)
		if _, clock := m.(*wire.Clock); !ok && !clock {
			return nil, fmt.Errorf("checker: log entry %d holds a %v", firstLogIndex+uint64(i), m.Type())
		}
		reqs[i] = req
	}
	return reqs, nil
}

// firstLogged maps each operation in the log to the index of its first
// entry, where it takes effect.
func firstLogged(log []*wire.Request) map[wire.OpID]uint64 {
	at := make(map[wire.OpID]uint64, len(log))
	for i, req := range log {
		if req == nil {
			continue
		}
		if _, seen := at[req.Op.ID]; !seen {
			at[req.Op.ID] = firstLogIndex + uint64(i)
		}
	}
	return at
}

// checkAppliedLog checks X1 against what the replicas applied rather than
// what clients were told: replaying the committed log with each operation
// taking effect once, at its first appearance, must give every replica's
// state at its applied index. A replica whose state differs either applied
// some operation twice (a retry logged after another write to its key,
// say) or skipped a logged one as a duplicate it never applied. Replicas
// applied beyond the known log are not checked.
func checkAppliedLog(f *history.File, log []*wire.Request, rep *reporter) {
	if f.Log == nil {
		return // no log handed over (a leaderless protocol has none)
	}
	want := make(map[uint64][]history.ReplicaState) // by applied index
	for _, r := range f.Replicas {
		if r.Applied < firstLogIndex+uint64(len(log)) {
			want[r.Applied] = append(want[r.Applied], r)
		}
	}
	if len(want) == 0 {
		return
	}
	ref := kvstore.New()
	seen := make(map[wire.OpID]bool)
	var effects uint64 // a fresh identity per effect: the replay does its own deduplication
	check := func(index uint64) {
		for _, r := range want[index] {
			rep.count(1, "X1")
			if r.Digest != ref.Digest() {
				rep.add(Violation{Property: "X1", Detail: fmt.Sprintf(
					"replica %d's state after applying the log up to slot %d (digest %#x) is not that log replayed "+
						"with each operation taking effect once (digest %#x): an operation took effect twice, "+
						"or a logged one was skipped as a duplicate", r.ID, index, r.Digest, ref.Digest())})
			}
		}
	}
	check(firstLogIndex - 1)
	for i, req := range log {
		index := firstLogIndex + uint64(i)
		if req != nil && !seen[req.Op.ID] {
			seen[req.Op.ID] = true
			effects++
			op := req.Op
			op.ID = wire.OpID{Session: effects, Seq: 1}
			ref.Apply(index, &op, 0)
		}
		check(index)
	}
}
