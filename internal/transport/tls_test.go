package transport

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/certs"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// syncBuffer is a log sink safe for the transport's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type pki struct {
	ca   *certs.CA
	pool *x509.CertPool
}

func newPKI(t *testing.T) pki {
	ca, err := certs.NewCA("test CA", time.Now().Add(time.Hour))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pki{ca, pool}
}

// keyPair turns an issued certificate into a key pair, failing t on error.
func keyPair(t *testing.T) func(certs.Issued, error) tls.Certificate {
	return func(issued certs.Issued, err error) tls.Certificate {
		t.Helper()
		require.NoError(t, err)
		cert, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
		require.NoError(t, err)
		return cert
	}
}

func (p pki) replica(t *testing.T, id uint64) tls.Certificate {
	return keyPair(t)(p.ca.Replica(id, []string{"127.0.0.1"}, time.Now().Add(-time.Hour), time.Now().Add(time.Hour)))
}

// tlsServer starts replica 1 with mutual TLS; its log lines land in log.
func tlsServer(t *testing.T, p pki, in *inbox) (*Transport, *syncBuffer) {
	log := &syncBuffer{}
	tr := start(t, Config{Self: 1, Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(log, nil)),
		TLS: &TLS{Server: certs.ServerConfig(p.replica(t, 1), p.pool), Authorize: certs.Authorize}}, in.handle)
	return tr, log
}

// tlsDialer starts node self dialing replica 1 with cert, trusting pool.
func tlsDialer(t *testing.T, self wire.NodeID, addr string, cert tls.Certificate, pool *x509.CertPool) *Transport {
	return start(t, Config{Self: self, Peers: map[wire.NodeID]Peer{1: {Addr: addr}},
		TLS: &TLS{Client: func(peer wire.NodeID) *tls.Config { return certs.ClientConfig(cert, pool, uint64(peer)) }}},
		func(wire.NodeID, wire.Message) {})
}

func requireRejected(t *testing.T, log *syncBuffer, in *inbox, reason string) {
	t.Helper()
	require.Eventually(t, func() bool { return bytes.Contains([]byte(log.String()), []byte(reason)) },
		waitFor, time.Millisecond, "no log line saying %q; log:\n%s", reason, log.String())
	require.Contains(t, log.String(), "rejected connection")
	require.Contains(t, log.String(), "remote=127.0.0.1:")
	t.Log(log.String())
	select {
	case d := <-in.ch:
		t.Fatalf("a message from a rejected peer was delivered: %v", d.m)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestTLSAcceptsItsPeers(t *testing.T) {
	p := newPKI(t)
	in := newInbox()
	srv, _ := tlsServer(t, p, in)
	addr := srv.Addr().String()
	peer := tlsDialer(t, 2, addr, p.replica(t, 2), p.pool)
	client := tlsDialer(t, wire.FirstClientID+5, addr,
		keyPair(t)(p.ca.Client("site0", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))), p.pool)
	for _, tr := range []*Transport{peer, client} {
		waitConnected(t, tr, 1)
		tr.Send(1, request(1))
		d := in.next(t)
		require.Equal(t, tr.cfg.Self, d.from)
	}
}

func TestTLSRejectsAReplicaClaimingAnotherID(t *testing.T) {
	p := newPKI(t)
	in := newInbox()
	srv, log := tlsServer(t, p, in)
	impostor := tlsDialer(t, 3, srv.Addr().String(), p.replica(t, 2), p.pool)
	impostor.Send(1, request(1))
	requireRejected(t, log, in, "certificate of replica 2 used to claim node 3")
}

func TestTLSRejectsAClientCertificateClaimingAReplica(t *testing.T) {
	p := newPKI(t)
	in := newInbox()
	srv, log := tlsServer(t, p, in)
	cert := keyPair(t)(p.ca.Client("site0", time.Now().Add(-time.Hour), time.Now().Add(time.Hour)))
	impostor := tlsDialer(t, 2, srv.Addr().String(), cert, p.pool)
	impostor.Send(1, request(1))
	requireRejected(t, log, in, `client certificate (site \"site0\") used to claim replica 2`)
}

func TestTLSRejectsACertificateFromAnotherCA(t *testing.T) {
	p := newPKI(t)
	in := newInbox()
	srv, log := tlsServer(t, p, in)
	other := newPKI(t)
	// The stranger trusts our CA, so only our side can refuse it.
	stranger := tlsDialer(t, wire.FirstClientID+1, srv.Addr().String(),
		keyPair(t)(other.ca.Client("x", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))), p.pool)
	stranger.Send(1, request(1))
	requireRejected(t, log, in, "certificate signed by unknown authority")
}

func TestTLSRejectsAnExpiredCertificate(t *testing.T) {
	p := newPKI(t)
	in := newInbox()
	srv, log := tlsServer(t, p, in)
	expired := keyPair(t)(p.ca.Replica(2, nil, time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)))
	peer := tlsDialer(t, 2, srv.Addr().String(), expired, p.pool)
	peer.Send(1, request(1))
	requireRejected(t, log, in, "certificate has expired")
}

func TestTLSRejectsPlainText(t *testing.T) {
	p := newPKI(t)
	in := newInbox()
	srv, log := tlsServer(t, p, in)
	nc, err := net.Dial("tcp", srv.Addr().String())
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write(append(wire.AppendFrame(nil, &wire.Hello{From: 2}), wire.AppendFrame(nil, request(1))...))
	require.NoError(t, err)
	requireRejected(t, log, in, "first record does not look like a TLS handshake")
	// The server closed the connection.
	nc.SetReadDeadline(time.Now().Add(waitFor))
	_, err = nc.Read(make([]byte, 1024))
	require.Error(t, err)
	// And it still serves its real peers.
	peer := tlsDialer(t, 2, srv.Addr().String(), p.replica(t, 2), p.pool)
	waitConnected(t, peer, 1)
	peer.Send(1, request(2))
	require.Equal(t, wire.NodeID(2), in.next(t).from)
}

func TestTLSDialerRejectsAServerWithTheWrongIdentity(t *testing.T) {
	p := newPKI(t)
	in := newInbox()
	srv, _ := tlsServer(t, p, in) // replica 1's certificate
	log := &syncBuffer{}
	cert := p.replica(t, 2)
	// Replica 2 believes replica 3 listens at the server's address.
	tr := start(t, Config{Self: 2, Peers: map[wire.NodeID]Peer{3: {Addr: srv.Addr().String()}},
		Logger: slog.New(slog.NewTextHandler(log, nil)),
		TLS:    &TLS{Client: func(peer wire.NodeID) *tls.Config { return certs.ClientConfig(cert, p.pool, uint64(peer)) }}},
		func(wire.NodeID, wire.Message) {})
	tr.Send(3, request(1))
	require.Eventually(t, func() bool { return bytes.Contains([]byte(log.String()), []byte("TLS handshake failed")) },
		waitFor, time.Millisecond)
	require.Contains(t, log.String(), "replica-3.hybridkv")
}
