package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/transport"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestRetryAfterFullRestartAppliesOnce runs every protocol as three replica
// processes, writes a key twice in one session, SIGKILLs every replica and
// restarts them from their data directories, then has the first write
// arrive again with its old identity, as a client's late retry would: the
// session table the replicas rebuilt from disk knows it was applied, so the
// key keeps the second value. A new operation sent the same way is applied,
// so the retry did reach the replicas.
func TestRetryAfterFullRestartAppliesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	for _, name := range protocols.TestNames() {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Protocol = name
			ctx, ps, cc := spawnLocal(t, &cfg)

			const key = "k7"
			c, err := client.New(cc)
			require.NoError(t, err)
			s := c.NewSession()
			require.NoError(t, s.Put(ctx, key, []byte("first"), client.Strong))
			require.NoError(t, s.Put(ctx, key, []byte("second"), client.Strong))
			session := s.ID()
			require.NoError(t, c.Close())

			var ids []uint64
			for _, p := range ps.List() {
				p.Kill()
				ids = append(ids, p.ID)
			}
			require.NoError(t, ps.RestartAll(ctx, ids))

			resend := rawSender(t, cc)
			resend(&wire.Request{Op: wire.Op{ID: wire.OpID{Session: session, Seq: 1}, Level: wire.Strong,
				Kind: wire.Put, Key: key, Value: []byte("first")}, Flags: wire.FlagRetry})
			require.Equal(t, "second", readStrong(ctx, t, cc, key), "the retried write was applied again")

			resend(&wire.Request{Op: wire.Op{ID: wire.OpID{Session: session, Seq: 3}, Level: wire.Strong,
				Kind: wire.Put, Key: key, Value: []byte("third")}})
			require.Equal(t, "third", readStrong(ctx, t, cc, key), "a request sent this way never reached the replicas")
		})
	}
}

// spawnLocal starts cfg's replicas as processes on free local ports, 5 ms
// apart, stopped when the test ends, and returns a context for the test's
// operations (two minutes) and the configuration of a client at the first
// site.
func spawnLocal(t *testing.T, cfg *config.Config) (context.Context, *cluster.Processes, client.Config) {
	t.Helper()
	cfg.Network.OneWayMs = 5
	require.NoError(t, cluster.FreePorts(cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ps, err := cluster.Spawn(ctx, binary, cfg, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(ps.Stop)
	cc, err := cluster.ClientConfig(cfg, cfg.Sites[0])
	require.NoError(t, err)
	return ctx, ps, cc
}

// rawSender returns a function that sends a request to every replica, ten
// times over a second, from a client node of its own.
func rawSender(t *testing.T, cc client.Config) func(*wire.Request) {
	peers := make(map[wire.NodeID]transport.Peer)
	for _, r := range cc.Replicas {
		peers[wire.NodeID(r.ID)] = transport.Peer{Addr: r.Addr}
	}
	tr, err := transport.New(transport.Config{Self: wire.FirstClientID + 1<<20, Peers: peers},
		func(wire.NodeID, wire.Message) {})
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	require.Eventually(t, func() bool {
		for id := range peers {
			if !tr.Connected(id) {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)
	return func(req *wire.Request) {
		for range 10 {
			for id := range peers {
				tr.Send(id, req)
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func readStrong(ctx context.Context, t *testing.T, cc client.Config, key string) string {
	c, err := client.New(cc)
	require.NoError(t, err)
	defer c.Close()
	v, found, err := c.NewSession().Get(ctx, key, client.Strong)
	require.NoError(t, err)
	require.True(t, found)
	return string(v)
}
