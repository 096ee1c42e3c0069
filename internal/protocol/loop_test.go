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
	ready                 protocol.Ready
}

func discard([]wire.Envelope) {}

func (c *core) Tick()                          { c.ticks++ }
func (c *core) Flush()                         { c.flushes++; c.pending = false }
func (c *core) Pending() bool                  { return c.pending }
func (c *core) Step(wire.NodeID, wire.Message) { c.steps++; c.pending = true }
func (c *core) Ready() protocol.Ready          { return c.ready }
func (c *core) Advance()                       { c.ready = protocol.Ready{} }

func TestLoopAppliesTheBatchingRule(t *testing.T) {
	in := round.NewInbox()
	c := &core{}
	now := protocol.Loop{Core: c, Inbox: in, Limits: round.Deployed, Send: discard}
	in.Put(client, &wire.Request{})
	arm, _ := now.Round(protocol.Event{Ticks: 2}, nil)
	require.False(t, arm)
	require.Equal(t, [3]int{2, 1, 1}, [3]int{c.ticks, c.steps, c.flushes}, "no batch delay: proposed at the end of the round")

	c = &core{}
	later := protocol.Loop{Core: c, Inbox: in, Limits: round.Deployed, BatchDelay: 1, Send: discard}
	in.Put(client, &wire.Request{})
	arm, _ = later.Round(protocol.Event{}, nil)
	require.True(t, arm, "the first pending request arms the timer")
	in.Put(client, &wire.Request{})
	arm, _ = later.Round(protocol.Event{}, nil)
	require.False(t, arm, "armed already")
	require.Zero(t, c.flushes)
	arm, _ = later.Round(protocol.Event{BatchDue: true}, nil)
	require.False(t, arm)
	require.Equal(t, 1, c.flushes)
}

// disk is a write that counts how often it was done.
type disk struct{ done int }

func (d *disk) Do() error            { d.done++; return nil }
func (d *disk) Merge(protocol.Write) {}

func TestLoopHandsOutByReadysRules(t *testing.T) {
	const self, peer = wire.NodeID(1), wire.NodeID(2)
	in := round.NewInbox()
	c := &core{}
	var sent []wire.NodeID
	loop := protocol.Loop{Core: c, Inbox: in, Limits: round.Deployed, Self: self,
		Send: func(envs []wire.Envelope) {
			for _, e := range envs {
				sent = append(sent, e.To)
			}
		}}
	durable := &wire.Reply{}
	d := &disk{}
	c.ready = protocol.Ready{
		Messages: []wire.Envelope{{To: peer, Msg: &wire.Reply{}}},
		Write:    d,
		After:    []wire.Envelope{{To: self, Msg: durable}, {To: peer, Msg: &wire.Reply{}}},
	}
	_, writing := loop.Round(protocol.Event{}, nil)
	require.True(t, writing)
	require.Equal(t, []wire.NodeID{peer}, sent, "Messages at once, After not before the write")
	require.Zero(t, in.Len())

	c.ready = protocol.Ready{After: []wire.Envelope{{To: peer, Msg: &wire.Reply{}}}}
	_, writing = loop.Round(protocol.Event{}, nil)
	require.True(t, writing)
	require.Equal(t, []wire.NodeID{peer}, sent, "After behind an earlier round's write waits too")

	b, ok := loop.Writes.Take()
	require.True(t, ok)
	require.NoError(t, b.Write.Do())
	loop.Written(b)
	require.Equal(t, 1, d.done)
	require.Equal(t, []wire.NodeID{peer, peer, peer}, sent)
	got := in.Take()
	require.Len(t, got, 1, "raft's news for the replica itself goes back to its inbox")
	require.Same(t, durable, got[0].Msg)
	require.Zero(t, loop.Writes.Len())

	c.ready = protocol.Ready{After: []wire.Envelope{{To: self, Msg: durable}}}
	_, writing = loop.Round(protocol.Event{}, nil)
	require.False(t, writing, "nothing waits for the disk: After at once")
	require.Equal(t, 1, in.Len())
}

// watcher is a core that records what the loop told it of its writes.
type watcher struct {
	core
	told []uint64
}

func (w *watcher) WritesDone(round uint64) { w.told = append(w.told, round) }

// TestLoopTellsAWatcherWhichRoundsAreWritten: rounds are numbered by the
// core's Ready calls, and a round after a write is done tells the core the
// number of the last round that write covered, never less than before.
func TestLoopTellsAWatcherWhichRoundsAreWritten(t *testing.T) {
	in := round.NewInbox()
	w := &watcher{}
	loop := protocol.Loop{Core: w, Inbox: in, Limits: round.Deployed, Send: discard}
	write := func() { w.ready = protocol.Ready{Write: &disk{}, After: []wire.Envelope{{To: 2, Msg: &wire.Reply{}}}} }
	write()
	loop.Round(protocol.Event{}, nil) // round 1 writes
	loop.Round(protocol.Event{}, nil) // round 2 writes nothing
	write()
	loop.Round(protocol.Event{}, nil) // round 3 writes
	b, ok := loop.Writes.Take()
	require.True(t, ok)
	write()
	loop.Round(protocol.Event{}, nil) // round 4 writes, after the writer took 1 and 3
	require.Equal(t, []uint64{0, 0, 0, 0}, w.told, "nothing written yet")
	loop.Written(b)
	loop.Round(protocol.Event{}, nil) // round 5
	require.Equal(t, uint64(3), w.told[4], "rounds up to 3 written")
	b, _ = loop.Writes.Take()
	loop.Written(b)
	loop.Round(protocol.Event{}, nil)
	require.Equal(t, uint64(4), w.told[5])
}
