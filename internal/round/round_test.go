package round_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/protocol"
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

// core counts what a round did to it.
type core struct {
	protocol.Replica
	ticks, flushes, steps int
	pending               bool
}

func (c *core) Tick()                          { c.ticks++ }
func (c *core) Flush()                         { c.flushes++; c.pending = false }
func (c *core) Pending() bool                  { return c.pending }
func (c *core) Step(wire.NodeID, wire.Message) { c.steps++; c.pending = true }
func (c *core) Ready() protocol.Ready          { return protocol.Ready{} }

func TestLoopAppliesTheBatchingRule(t *testing.T) {
	in := round.NewInbox()
	c := &core{}
	now := round.Loop{Core: c, Inbox: in, Limits: round.Deployed}
	in.Put(client, &wire.Request{})
	_, arm := now.Round(round.Event{Ticks: 2}, nil)
	require.False(t, arm)
	require.Equal(t, [3]int{2, 1, 1}, [3]int{c.ticks, c.steps, c.flushes}, "no batch delay: proposed at the end of the round")

	c = &core{}
	later := round.Loop{Core: c, Inbox: in, Limits: round.Deployed, BatchDelay: 1}
	in.Put(client, &wire.Request{})
	_, arm = later.Round(round.Event{}, nil)
	require.True(t, arm, "the first pending request arms the timer")
	in.Put(client, &wire.Request{})
	_, arm = later.Round(round.Event{}, nil)
	require.False(t, arm, "armed already")
	require.Zero(t, c.flushes)
	_, arm = later.Round(round.Event{BatchDue: true}, nil)
	require.False(t, arm)
	require.Equal(t, 1, c.flushes)
}
