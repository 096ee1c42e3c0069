package checker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

func logPut(session, seq, key uint64, value string) wire.Op {
	return wire.Op{ID: wire.OpID{Session: session, Seq: seq}, Kind: wire.Put, Key: key, Value: []byte(value)}
}

// digestOf is the state of a store that executed ops in turn, each as a
// new operation: what a replica holds after applying exactly those.
func digestOf(ops ...wire.Op) uint64 {
	s := kvstore.New()
	for i, op := range ops {
		op.ID = wire.OpID{Session: uint64(i + 1), Seq: 1}
		s.Apply(uint64(i+2), &op, 0)
	}
	return s.Digest()
}

// TestAppliedLogCatchesDoubleEffects: A's put is logged, then B's put to
// the same key, then A's retry. A replica that deduplicates holds B's
// value; one that applied the retry again holds A's, and one that took B
// for a duplicate holds A's too: X1 names both.
func TestAppliedLogCatchesDoubleEffects(t *testing.T) {
	a, b, other := logPut(1, 1, 7, "a"), logPut(2, 1, 7, "b"), logPut(1, 2, 8, "c")
	var log [][]byte
	for _, op := range []wire.Op{a, b, a, other} {
		log = append(log, wire.Append(nil, &wire.Request{Op: op}))
	}
	log = append(log, nil) // raft's own entry

	check := func(rs ...history.ReplicaState) Result {
		return Check(&history.File{Replicas: rs, Log: log}, Options{})
	}
	good := digestOf(a, b, other)
	res := check(history.ReplicaState{ID: 1, Applied: 6, Digest: good},
		history.ReplicaState{ID: 2, Applied: 2, Digest: digestOf(a)},
		history.ReplicaState{ID: 3, Applied: 99, Digest: 1}) // beyond the log: not checked
	require.NoError(t, res.Err)
	require.True(t, res.Clean(), "%v", res.Violations)
	require.Equal(t, 2, res.Checked["X1"])

	res = check(history.ReplicaState{ID: 1, Applied: 6, Digest: digestOf(a, b, a, other)})
	require.False(t, res.Clean(), "a retry applied twice went unnoticed")
	require.Equal(t, "X1", res.Violations[0].Property)

	res = check(history.ReplicaState{ID: 1, Applied: 6, Digest: digestOf(a, other)})
	require.False(t, res.Clean(), "a logged write skipped as a duplicate went unnoticed")
	require.Contains(t, res.Violations[0].Detail, "replica 1")
}

func TestAppliedLogRejectsWhatIsNotARequest(t *testing.T) {
	res := Check(&history.File{Replicas: []history.ReplicaState{{ID: 1, Applied: 2}}, Log: [][]byte{{0xff, 0x01}}}, Options{})
	require.Error(t, res.Err)
}
