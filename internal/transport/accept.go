package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// acceptRetry paces the accept loop after a transient failure such as
// running out of file descriptors.
const acceptRetry = 10 * time.Millisecond

func (t *Transport) acceptLoop() {
	defer t.wg.Done()
	for {
		nc, err := t.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || t.ctx.Err() != nil {
				return
			}
			t.log.Warn("transport: accept failed", "err", err)
			if !t.sleep(acceptRetry) {
				return
			}
			continue
		}
		if !t.track(nc) {
			nc.Close()
			return
		}
		t.wg.Add(1)
		go t.serveAccepted(nc)
	}
}

// serveAccepted identifies the remote node from its Hello and then serves the
// connection as that node's route.
func (t *Transport) serveAccepted(nc net.Conn) {
	defer t.wg.Done()
	tuneTCP(nc)
	if t.cfg.TLS != nil {
		var err error
		if nc, err = t.acceptTLS(nc); err != nil {
			return
		}
	}
	r := newFrameReader(nc)
	h, err := t.readHello(nc, r)
	if err != nil {
		t.untrack(nc)
		t.logEnd(fmt.Errorf("handshake: %w", err), "remote", nc.RemoteAddr())
		return
	}
	if err := t.authorize(nc, h.From); err != nil {
		t.untrack(nc)
		t.log.Warn("transport: rejected connection", "remote", nc.RemoteAddr(), "claims", h.From, "reason", err)
		return
	}
	c := t.newConn(nc, h.From, h.Site)
	t.register(c)
	t.serve(c, r)
	t.unregister(c)
}

func (t *Transport) readHello(nc net.Conn, r *frameReader) (*wire.Hello, error) {
	nc.SetReadDeadline(time.Now().Add(t.cfg.handshakeTimeout()))
	h, err := r.hello()
	if err != nil {
		return nil, err
	}
	if d := t.cfg.Delay; d != nil && int(h.Site) >= d.Sites() {
		return nil, &malformedError{fmt.Errorf("node %d at site %d outside %d-site delay matrix", h.From, h.Site, d.Sites())}
	}
	return h, nc.SetReadDeadline(time.Time{})
}

// register makes c the route to its node. A reconnecting node's new
// connection replaces the old one, which is left to fail on its own: it may
// still deliver frames the node sent before reconnecting.
func (t *Transport) register(c *conn) {
	t.routesMu.Lock()
	t.accepted[c.remote] = c
	t.routesMu.Unlock()
}

func (t *Transport) unregister(c *conn) {
	t.routesMu.Lock()
	if t.accepted[c.remote] == c {
		delete(t.accepted, c.remote)
	}
	t.routesMu.Unlock()
}

// acceptTLS runs the server side of the TLS handshake, which verifies the
// peer's certificate; a failure (wrong CA, expired certificate, a
// plain-text peer) closes the connection with a log line saying why.
func (t *Transport) acceptTLS(nc net.Conn) (net.Conn, error) {
	tc := tls.Server(nc, t.cfg.TLS.Server)
	err := t.handshake(tc)
	if err == nil && !t.retrack(nc, tc) {
		err = net.ErrClosed
	}
	if err != nil {
		t.untrack(nc)
		if t.ctx.Err() == nil {
			t.log.Warn("transport: rejected connection", "remote", nc.RemoteAddr(), "reason", err)
		}
		return nil, err
	}
	return tc, nil
}

// authorize checks that an accepted TLS connection's certificate may speak
// for the node it claims.
func (t *Transport) authorize(nc net.Conn, claimed wire.NodeID) error {
	tc, ok := nc.(*tls.Conn)
	if !ok {
		return nil
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return errors.New("no client certificate")
	}
	return t.cfg.TLS.Authorize(certs[0], claimed)
}

// handshake runs a TLS handshake within the handshake timeout.
func (t *Transport) handshake(tc *tls.Conn) error {
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.handshakeTimeout())
	defer cancel()
	return tc.HandshakeContext(ctx)
}
