package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// countingSync counts the syncs a write made.
type countingSync struct{ n int }

func (c *countingSync) Sync() error { c.n++; return nil }

func envs(tos ...wire.NodeID) []wire.Envelope {
	out := make([]wire.Envelope, len(tos))
	for i, to := range tos {
		out[i] = wire.Envelope{To: to, Msg: &wire.Reply{}}
	}
	return out
}

func tos(es []wire.Envelope) []wire.NodeID {
	var out []wire.NodeID
	for _, e := range es {
		out = append(out, e.To)
	}
	return out
}

func TestRoundWithoutWriteGoesOutAtOnceOnlyWhenNothingWaits(t *testing.T) {
	var q protocol.WriteQueue
	require.Equal(t, []wire.NodeID{1}, tos(q.Add(protocol.Ready{After: envs(1)})),
		"nothing waits: the round's messages go at once")

	sync := &countingSync{}
	require.Nil(t, q.Add(protocol.Ready{Write: (*raftlog.Write)(nil).Also(sync), After: envs(2)}))
	// A reply of a later round may rest on what the write holds.
	require.Nil(t, q.Add(protocol.Ready{After: envs(3)}), "a round without a write jumped the queue")
	require.Equal(t, 2, q.Len())

	b, ok := q.Take()
	require.True(t, ok)
	require.Equal(t, []wire.NodeID{2, 3}, tos(b.After))
	// Rounds that come while the batch is written wait behind it.
	require.Nil(t, q.Add(protocol.Ready{After: envs(4)}))
	require.NoError(t, b.Write.Do())
	require.Equal(t, 1, sync.n)
	q.Done(b)

	b, ok = q.Take()
	require.True(t, ok)
	require.Nil(t, b.Write)
	require.Equal(t, []wire.NodeID{4}, tos(b.After))
	q.Done(b)
	_, ok = q.Take()
	require.False(t, ok)
	require.Equal(t, []wire.NodeID{5}, tos(q.Add(protocol.Ready{After: envs(5)})))
}

func TestWaitingWritesShareOneSync(t *testing.T) {
	var q protocol.WriteQueue
	sync := &countingSync{}
	for i := range 3 {
		q.Add(protocol.Ready{Write: (*raftlog.Write)(nil).Also(sync), After: envs(wire.NodeID(i + 1))})
	}
	b, ok := q.Take()
	require.True(t, ok)
	require.NoError(t, b.Write.Do())
	require.Equal(t, 1, sync.n, "three waiting writes took more than one sync")
	require.Equal(t, []wire.NodeID{1, 2, 3}, tos(b.After))
}

func TestClearForgetsWaitingRounds(t *testing.T) {
	var q protocol.WriteQueue
	q.Add(protocol.Ready{Write: (*raftlog.Write)(nil).Also(&countingSync{}), After: envs(1)})
	q.Clear()
	require.Equal(t, 0, q.Len())
	require.Equal(t, []wire.NodeID{2}, tos(q.Add(protocol.Ready{After: envs(2)})))
}
