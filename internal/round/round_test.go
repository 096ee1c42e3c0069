package round_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/round"
	"github.com/hybridkv/hybridkv/internal/wire"
)

const client = wire.FirstClientID

func TestTakeStepsEveryReplicaMessageAndClientsWithinTheLimits(t *testing.T) {
	in := round.NewInbox()
	for i := range 10 {
		in.Put(client+wire.NodeID(i), &wire.Request{})
	}
	in.Put(2, &wire.Raft{})
	var from []wire.NodeID
	step := func(f wire.NodeID, _ wire.Message) { from = append(from, f) }
	n := round.Take(in, round.Limits{Clients: 4, Chunk: 3}, nil, step)
	require.Equal(t, 5, n)
	require.Equal(t, []wire.NodeID{2, client, client + 1, client + 2, client + 3}, from, "the replica's first, then clients in order, four at most")
	from = nil
	spent := 0
	n = round.Take(in, round.Limits{Clients: 100, Chunk: 2}, func() bool { spent++; return spent == 2 }, step)
	require.Equal(t, 4, n, "the budget ends the round after the second chunk")
	require.Equal(t, 2, in.Len())
	require.Equal(t, 2, round.Take(in, round.Unlimited, nil, step))
}
