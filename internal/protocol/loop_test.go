package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/round"
	"github.com/hybridkv/hybridkv/internal/wire"
)

const client = wire.FirstClientID

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
	now := protocol.Loop{Core: c, Inbox: in, Limits: round.Deployed}
	in.Put(client, &wire.Request{})
	_, arm := now.Round(protocol.Event{Ticks: 2}, nil)
	require.False(t, arm)
	require.Equal(t, [3]int{2, 1, 1}, [3]int{c.ticks, c.steps, c.flushes}, "no batch delay: proposed at the end of the round")

	c = &core{}
	later := protocol.Loop{Core: c, Inbox: in, Limits: round.Deployed, BatchDelay: 1}
	in.Put(client, &wire.Request{})
	_, arm = later.Round(protocol.Event{}, nil)
	require.True(t, arm, "the first pending request arms the timer")
	in.Put(client, &wire.Request{})
	_, arm = later.Round(protocol.Event{}, nil)
	require.False(t, arm, "armed already")
	require.Zero(t, c.flushes)
	_, arm = later.Round(protocol.Event{BatchDue: true}, nil)
	require.False(t, arm)
	require.Equal(t, 1, c.flushes)
}
