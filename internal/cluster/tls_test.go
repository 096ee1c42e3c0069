package cluster_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
)

// TestTLSCluster runs every protocol's replicas and a client over mutual
// TLS with generated certificates; a client without them gets no answer.
func TestTLSCluster(t *testing.T) {
	for _, proto := range protocols.TestNames() {
		t.Run(proto, func(t *testing.T) {
			cfg := config.Default()
			cfg.Protocol = proto
			cfg.Network.OneWayMs = 1
			// The TLS client waits as long as a slow disk may hold the
			// first write back (a stall of 0.9 s has been seen); the plain
			// one, expected to get no answer, gives up after a second.
			cfg.Client.RetryMs, cfg.Client.TimeoutMs = 100, 20000
			require.NoError(t, cluster.FreePorts(&cfg))
			require.NoError(t, cluster.GenerateTLS(&cfg, filepath.Join(t.TempDir(), "certs")))
			l, err := cluster.StartLocal(&cfg, t.TempDir(), nil)
			require.NoError(t, err)
			t.Cleanup(l.Stop)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			s := newClient(t, &cfg, cfg.Sites[0]).NewSession()
			require.NoError(t, s.Put(ctx, "1", []byte("secret"), client.Strong))
			v, _, err := s.Get(ctx, "1", client.Strong)
			require.NoError(t, err)
			require.Equal(t, "secret", string(v))

			plain := cfg
			plain.TLS = config.TLSFiles{}
			plain.Client.TimeoutMs = 1000
			_, _, err = newClient(t, &plain, cfg.Sites[0]).NewSession().Get(ctx, "1", client.Strong)
			require.ErrorIs(t, err, client.ErrTimeout, "a client without TLS was answered")
		})
	}
}

// TestPlainTCPOffLoopbackIsRefused: a replica configured to listen on an
// address other hosts reach refuses to start without TLS, unless told.
func TestPlainTCPOffLoopbackIsRefused(t *testing.T) {
	cfg := config.Default()
	cfg.Replicas[0].Addr = "0.0.0.0:0"
	_, err := cluster.NewServer(&cfg, 1, cluster.ServerOptions{DataDir: t.TempDir(), Bootstrap: true}, nil)
	require.ErrorContains(t, err, "replica 1 would listen on 0.0.0.0:0 without TLS")
	srv, err := cluster.NewServer(&cfg, 1, cluster.ServerOptions{DataDir: t.TempDir(), Bootstrap: true, Insecure: true}, nil)
	require.NoError(t, err)
	require.NoError(t, srv.Disk.Close())
	srv.Transport().Close()
}
