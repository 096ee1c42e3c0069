package etcdapi_test

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/hybridkv/hybridkv/internal/certs"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
)

// TestGatewayTLS: with the cluster's certificates configured, the gateway
// serves TLS with its site replica's certificate and takes only clients
// whose certificate the cluster's CA issued; for every protocol, in this
// process and as a gateway process beside a cluster started with --tls.
func TestGatewayTLS(t *testing.T) {
	for _, proto := range tlsTested {
		t.Run(proto+"/in-process", func(t *testing.T) {
			cfg := config.Default()
			cfg.Protocol = proto
			cfg.Network.OneWayMs = 1
			require.NoError(t, cluster.FreePorts(&cfg))
			require.NoError(t, cluster.GenerateTLS(&cfg, t.TempDir()))
			l, err := cluster.StartLocal(&cfg, t.TempDir(), nil)
			require.NoError(t, err)
			t.Cleanup(l.Stop)
			g, err := cluster.StartGateway(&cfg, cfg.Replicas[0].Site, cluster.GatewayOptions{Listen: "127.0.0.1:0"}, nil)
			require.NoError(t, err)
			t.Cleanup(g.Stop)
			tlsClients(t, &cfg, g.Addr())
		})
		t.Run(proto+"/processes", func(t *testing.T) {
			p := startProcessesWith(t, proto, 1, []string{"--tls"})
			cfg, err := config.Load(p.config)
			require.NoError(t, err)
			require.True(t, cfg.TLS.Enabled(), "hybridkv cluster --tls wrote no tls section")
			tlsClients(t, &cfg, p.gateway)
		})
	}
}

// tlsClients checks a TLS gateway at addr: a client with its site's
// certificate is served; one without a certificate, and one in plain
// text, are not.
func tlsClients(t *testing.T, cfg *config.Config, addr string) {
	site := cfg.Replicas[0].Site
	certFile, keyFile := cfg.TLS.ForClient(site)
	cert, pool, err := certs.Files{CA: cfg.TLS.CA, Cert: certFile, Key: keyFile}.Load()
	require.NoError(t, err)
	withTLS := func(tc *tls.Config) *clientv3.Client {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 2 * time.Second, TLS: tc})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	good := withTLS(&tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool,
		ServerName: certs.ServerName(cfg.Replicas[0].ID), MinVersion: tls.VersionTLS13})
	_, err = good.Put(ctx(t), "k", "v")
	require.NoError(t, err)
	got, err := good.Get(ctx(t), "k")
	require.NoError(t, err)
	require.Equal(t, "v", string(got.Kvs[0].Value))

	// No client certificate: the handshake fails and so does every call.
	anon := withTLS(&tls.Config{RootCAs: pool, ServerName: certs.ServerName(cfg.Replicas[0].ID)})
	short, cancel := contextTimeout(t, 3*time.Second)
	defer cancel()
	_, err = anon.Get(short, "k")
	require.Error(t, err, "a client without a certificate was served")

	// Plain TCP to a TLS gateway fails too.
	plain, cancel2 := contextTimeout(t, 3*time.Second)
	defer cancel2()
	_, err = dialAddr(t, addr).Get(plain, "k")
	require.Error(t, err, "a plain-text client was served")
}
