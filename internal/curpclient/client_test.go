package curpclient_test

import (
	"testing"

	"github.com/stretchr/testify/require"

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
	a := c.Submit(1, wire.Op{Kind: wire.Put, Key: 1, Level: wire.Strong})
	sent(c, 1)
	b := c.Submit(2, wire.Op{Kind: wire.Put, Key: 2, Level: wire.Strong})
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
