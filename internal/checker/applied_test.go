package checker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

func logPut(session, seq uint64, key, value string) wire.Op {
	return wire.Op{ID: wire.OpID{Session: session, Seq: seq}, Kind: wire.Put, Key: key, Value: []byte(value)}
}

// applied is an operation applied at a slot.
type applied struct {
	slot uint64
	op   wire.Op
}

// digestOf is the state of a store that executed ops in turn, each as a
// new operation at its slot: what a replica holds after applying exactly
// those.
func digestOf(ops ...applied) uint64 {
	s := kvstore.New()
	for i, a := range ops {
		a.op.ID = wire.OpID{Session: uint64(i + 1), Seq: 1}
		s.Apply(a.slot, &a.op, 0)
	}
	return s.Digest()
}

func logOf(ops ...wire.Op) [][]byte {
	var log [][]byte
	for _, op := range ops {
		log = append(log, wire.Append(nil, &wire.Request{Op: op}))
	}
	return append(log, nil) // raft's own entry
}

// TestAppliedLogCatchesDoubleEffects: A's put is logged at slot 2, then
// B's put to the same key at 3, then A's retry at 4. A replica that
// deduplicates holds B's value; one that applied the retry again holds
// A's, and one that took B for a duplicate holds A's too: X1 names both.
func TestAppliedLogCatchesDoubleEffects(t *testing.T) {
	a, b, other := logPut(1, 1, "k7", "a"), logPut(2, 1, "k7", "b"), logPut(1, 2, "k8", "c")
	log := logOf(a, b, a, other)
	check := func(rs ...history.ReplicaState) Result {
		return Check(&history.File{Replicas: rs, Log: log}, Options{})
	}
	good := digestOf(applied{2, a}, applied{3, b}, applied{5, other})
	res := check(history.ReplicaState{ID: 1, Applied: 6, Digest: good},
		history.ReplicaState{ID: 2, Applied: 2, Digest: digestOf(applied{2, a})},
		history.ReplicaState{ID: 3, Applied: 99, Digest: 1}) // beyond the log: not checked
	require.NoError(t, res.Err)
	require.True(t, res.Clean(), "%v", res.Violations)
	require.Equal(t, 2, res.Checked["X1"])

	res = check(history.ReplicaState{ID: 1, Applied: 6, Digest: digestOf(applied{2, a}, applied{3, b}, applied{4, a}, applied{5, other})})
	require.False(t, res.Clean(), "a retry applied twice went unnoticed")
	require.Equal(t, "X1", res.Violations[0].Property)

	res = check(history.ReplicaState{ID: 1, Applied: 6, Digest: digestOf(applied{2, a}, applied{5, other})})
	require.False(t, res.Clean(), "a logged write skipped as a duplicate went unnoticed")
	require.Contains(t, res.Violations[0].Detail, "replica 1")
}

// TestAppliedLogCatchesARetryThatRewritesItsValue: A's retry, applied
// again with no other write to its key in between, leaves the value as it
// was, but not the slot that wrote it, which the digest covers.
func TestAppliedLogCatchesARetryThatRewritesItsValue(t *testing.T) {
	a, other := logPut(1, 1, "k7", "a"), logPut(2, 1, "k8", "c")
	log := logOf(a, a, other)
	res := Check(&history.File{Log: log, Replicas: []history.ReplicaState{
		{ID: 1, Applied: 4, Digest: digestOf(applied{2, a}, applied{4, other})}}}, Options{})
	require.True(t, res.Clean(), "%v", res.Violations)
	res = Check(&history.File{Log: log, Replicas: []history.ReplicaState{
		{ID: 1, Applied: 4, Digest: digestOf(applied{2, a}, applied{3, a}, applied{4, other})}}}, Options{})
	require.False(t, res.Clean(), "a retry applied twice, rewriting the value its key held, went unnoticed")
	require.Equal(t, "X1", res.Violations[0].Property)
}

func TestAppliedLogRejectsWhatIsNotARequest(t *testing.T) {
	res := Check(&history.File{Replicas: []history.ReplicaState{{ID: 1, Applied: 2}}, Log: [][]byte{{0xff, 0x01}}}, Options{})
	require.Error(t, res.Err)
}
