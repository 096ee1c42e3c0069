package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/transport"
)

// A client cut off from every replica by its own fault rules times out, and
// the timed-out write is recorded as unknown (it may have been applied);
// once healed the same client works again.
func TestClientFaultsCutItOff(t *testing.T) {
	cfg := testConfig(t)
	startLocal(t, cfg)
	// The short timeout below is for the cut-off write: a first write
	// waits out the first election, which may take longer.
	_, err := newClient(t, cfg).NewSession().Do(testContext(t), client.Put, "0", []byte("warm-up"), client.Strong)
	require.NoError(t, err)
	cc, err := cluster.ClientConfig(cfg, cfg.Sites[0])
	require.NoError(t, err)
	cc.Timeout = 500 * time.Millisecond
	cc.History = history.NewRecorder()
	cc.Faults = new(transport.Faults)
	c, err := client.New(cc)
	require.NoError(t, err)
	defer c.Close()
	require.Same(t, cc.Faults, c.Faults())
	ctx := testContext(t)
	s := c.NewSession()

	_, err = s.Do(ctx, client.Put, "1", []byte("before"), client.Strong)
	require.NoError(t, err)

	var ids []uint64
	for _, r := range cfg.Replicas {
		ids = append(ids, r.ID)
	}
	require.NoError(t, c.Faults().Set(transport.RuleSet{Rules: []transport.Rule{{Peers: ids, Drop: 1}}}))
	_, err = s.Do(ctx, client.Put, "1", []byte("cut off"), client.Strong)
	require.ErrorIs(t, err, client.ErrTimeout)

	c.Faults().Clear()
	_, err = s.Do(ctx, client.Put, "2", []byte("after"), client.Strong)
	require.NoError(t, err)

	var outcomes []history.Outcome
	for _, e := range cc.History.File().Events {
		outcomes = append(outcomes, e.Outcome)
	}
	require.Equal(t, []history.Outcome{history.OK, history.Unknown, history.OK}, outcomes)
}
