package curpclient_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curpclient"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// sent ticks the client n times and returns the requests it sent.
func sent(c *curpclient.Client, n int) []*wire.Request {
	var reqs []*wire.Request
	for range n {
		c.Tick()
		out, _ := c.Ready()
		for _, e := range out {
			reqs = append(reqs, e.Msg.(*wire.Request))
		}
		c.Advance()
	}
	return reqs
}

// TestUnansweredOperationsAreResentEveryRetryPeriod: an operation is
// re-sent, marked a retry, every RetryTicks ticks until it completes or is
// cancelled, whatever else is in flight.
func TestUnansweredOperationsAreResentEveryRetryPeriod(t *testing.T) {
	c := curpclient.New(curpclient.Config{ID: wire.FirstClientID, Replicas: []wire.NodeID{1, 2, 3}, RetryTicks: 3})
	a := c.Submit(1, wire.Op{Kind: wire.Put, Key: "1", Level: wire.Strong})
	sent(c, 1)
	b := c.Submit(2, wire.Op{Kind: wire.Put, Key: "2", Level: wire.Strong})
	c.Ready()
	c.Advance()
	got := sent(c, 2)
	require.Len(t, got, 3, "a, three ticks after it was sent, to every replica")
	for _, r := range got {
		require.Equal(t, a, r.Op.ID)
		require.NotZero(t, r.Flags&wire.FlagRetry)
	}
	got = sent(c, 1)
	require.Len(t, got, 3)
	require.Equal(t, b, got[0].Op.ID, "b, three ticks after it was sent")
	c.Cancel(a)
	got = sent(c, 3)
	require.Len(t, got, 3, "b again, a no more")
	require.Equal(t, b, got[0].Op.ID)
}

// TestASuperquorumIsTheCallersToVet: a reply that completes a superquorum
// leaves the operation pending for the caller to vet; refused, the fast
// path is the slow one when the leader's sync reply comes, with the
// caller's reason.
func TestASuperquorumIsTheCallersToVet(t *testing.T) {
	c := curpclient.New(curpclient.Config{ID: wire.FirstClientID, Replicas: []wire.NodeID{1, 2, 3}, RetryTicks: 3})
	p := c.Start(1, wire.Op{Kind: wire.Put, Key: "1", Level: wire.Strong})
	c.SendStrong(p)
	id := p.Req.Op.ID
	step := func(from wire.NodeID, rep *wire.Reply) curpclient.Outcome {
		rep.ID, rep.Term, rep.Leader = id, 1, 1
		got, pending := c.Receive(from, rep)
		require.Same(t, rep, got)
		require.Same(t, p, pending)
		return c.StepStrong(from, p, rep)
	}
	witnesses := []wire.Witness{{ID: 2, Incarnation: 1}, {ID: 3, Incarnation: 1}}
	require.Zero(t, step(1, &wire.Reply{Kind: wire.ReplySpeculative, Ok: true, Witnesses: witnesses, Slot: 7}))
	require.Zero(t, step(2, &wire.Reply{Kind: wire.ReplyWitness, Ok: true, Incarnation: 1}))
	out := step(3, &wire.Reply{Kind: wire.ReplyWitness, Ok: true, Incarnation: 1})
	require.True(t, out.Superquorum)
	require.Nil(t, out.Done)
	require.True(t, c.Awaiting(id), "the caller decides")

	c.RejectFastPath(p, clientcore.ReasonCausalDep)
	out = step(1, &wire.Reply{Kind: wire.ReplySync, Ok: true, Slot: 7})
	require.NotNil(t, out.Done)
	require.Equal(t, clientcore.PathSlow, out.Done.Path)
	require.Equal(t, clientcore.ReasonCausalDep, out.Done.Reason)
	require.False(t, c.Awaiting(id))
	_, done := c.Ready()
	require.Equal(t, []clientcore.Completion{*out.Done}, done, "queued for the driver as returned")
}
