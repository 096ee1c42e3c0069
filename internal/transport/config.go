package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Handler receives every message read from any connection. It runs on that
// connection's reader goroutine, so it must be safe for concurrent use, and a
// slow handler holds back further reads from that one peer only.
type Handler func(from wire.NodeID, m wire.Message)

// Peer is a node this one dials in order to send to it.
type Peer struct {
	Addr string
	Site uint32
}

// Config describes one node's transport.
type Config struct {
	Self wire.NodeID
	// Site is this node's index into the delay matrix.
	Site uint32
	// Listen is the "host:port" to accept connections on; empty for a node
	// that only dials, such as a client.
	Listen string
	// Peers are the nodes this one dials. Messages to them always use the
	// dialed connection; messages to anyone else use the connection that
	// node opened to us.
	Peers map[wire.NodeID]Peer
	// Delay emulates wide-area latency on outgoing frames; nil disables it.
	Delay *DelayModel
	// Faults are the injected faults (blackholes, lossy or slow links) the
	// transport obeys; nil gives it a rule set of its own, empty until set
	// through Transport.Faults.
	Faults *Faults
	// FlushDelay is how long a connection's writer waits after waking to
	// gather more frames into the same write, trading that much latency for
	// fewer syscalls. Zero writes immediately.
	FlushDelay time.Duration
	// HandshakeTimeout bounds the Hello exchange: how long an accepted
	// connection may take to send its Hello, and a dialer to write its own.
	// Zero means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// TLS, when set, secures every connection with mutual TLS; nil is
	// plain TCP.
	TLS *TLS
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// TLS is a transport's mutual TLS.
type TLS struct {
	// Server accepts connections; it must require and verify client
	// certificates. Nil for a node that only dials.
	Server *tls.Config
	// Client returns the configuration to dial peer with, which verifies
	// that the peer's certificate is the peer's.
	Client func(peer wire.NodeID) *tls.Config
	// Authorize decides whether the verified certificate of an accepted
	// connection may speak for the node its Hello claims.
	Authorize func(cert *x509.Certificate, claimed wire.NodeID) error
}

// DefaultHandshakeTimeout keeps a connection that never identifies itself
// from holding a goroutine and a socket forever.
const DefaultHandshakeTimeout = 5 * time.Second

func (c *Config) validate() error {
	if c.Listen == "" && len(c.Peers) == 0 {
		return errors.New("transport: config has neither Listen nor Peers")
	}
	if t := c.TLS; t != nil {
		switch {
		case c.Listen != "" && (t.Server == nil || t.Authorize == nil):
			return errors.New("transport: TLS on a listening node needs a server configuration and Authorize")
		case c.Listen != "" && t.Server.ClientAuth != tls.RequireAndVerifyClientCert:
			return errors.New("transport: TLS server configuration must require and verify client certificates")
		case len(c.Peers) > 0 && t.Client == nil:
			return errors.New("transport: TLS on a dialing node needs a client configuration")
		}
	}
	if c.FlushDelay < 0 || c.HandshakeTimeout < 0 {
		return errors.New("transport: negative FlushDelay or HandshakeTimeout")
	}
	for id, p := range c.Peers {
		if id == c.Self {
			return fmt.Errorf("transport: node %d lists itself as a peer", id)
		}
		if p.Addr == "" {
			return fmt.Errorf("transport: peer %d has no address", id)
		}
	}
	return c.validateDelay()
}

// validateDelay rejects a delay matrix that does not cover every site this
// node knows of: a missing entry would silently mean zero delay and skew an
// experiment.
func (c *Config) validateDelay() error {
	if c.Delay == nil {
		return nil
	}
	n := c.Delay.Sites()
	if int(c.Site) >= n {
		return fmt.Errorf("transport: site %d outside %d-site delay matrix", c.Site, n)
	}
	for id, p := range c.Peers {
		if int(p.Site) >= n {
			return fmt.Errorf("transport: peer %d site %d outside %d-site delay matrix", id, p.Site, n)
		}
	}
	return nil
}

func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

func (c *Config) handshakeTimeout() time.Duration {
	if c.HandshakeTimeout == 0 {
		return DefaultHandshakeTimeout
	}
	return c.HandshakeTimeout
}
