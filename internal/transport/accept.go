package transport

import (
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
	r := newFrameReader(nc)
	h, err := t.readHello(nc, r)
	if err != nil {
		t.untrack(nc)
		t.logEnd(fmt.Errorf("handshake: %w", err), "remote", nc.RemoteAddr())
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
