package transport

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

const (
	minBackoff  = 5 * time.Millisecond
	maxBackoff  = time.Second
	dialTimeout = 5 * time.Second
	// stableConn is how long a connection must last before its failure
	// restarts the backoff; a peer that accepts and at once drops us would
	// otherwise be redialed at the fastest rate forever.
	stableConn = time.Second
)

// dialer keeps one connection to a configured peer up for as long as the
// transport is open.
type dialer struct {
	t    *Transport
	id   wire.NodeID
	peer Peer
	// cur is the connection messages to the peer go on; nil while down.
	cur atomic.Pointer[conn]
}

func (d *dialer) run() {
	defer d.t.wg.Done()
	backoff := minBackoff
	for {
		nc, err := d.dial()
		if err == nil {
			start := time.Now()
			d.serve(nc)
			if time.Since(start) >= stableConn {
				backoff = minBackoff
			}
		} else if d.t.ctx.Err() == nil {
			d.t.log.Debug("transport: dial failed", "peer", d.id, "addr", d.peer.Addr, "err", err)
		}
		if !d.t.sleep(backoff) {
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// dial connects and introduces this node with a Hello.
func (d *dialer) dial() (net.Conn, error) {
	nd := net.Dialer{Timeout: dialTimeout}
	nc, err := nd.DialContext(d.t.ctx, "tcp", d.peer.Addr)
	if err != nil {
		return nil, err
	}
	if !d.t.track(nc) {
		nc.Close()
		return nil, net.ErrClosed
	}
	tuneTCP(nc)
	if d.t.cfg.TLS != nil {
		tc := tls.Client(nc, d.t.cfg.TLS.Client(d.id))
		err := d.t.handshake(tc)
		if err == nil && !d.t.retrack(nc, tc) {
			err = net.ErrClosed
		}
		if err != nil {
			d.t.untrack(nc)
			if d.t.ctx.Err() == nil {
				d.t.log.Warn("transport: TLS handshake failed", "peer", d.id, "addr", d.peer.Addr, "reason", err)
			}
			return nil, err
		}
		nc = tc
	}
	if err := d.t.sendHello(nc); err != nil {
		d.t.untrack(nc)
		return nil, err
	}
	return nc, nil
}

// serve publishes the connection for Send while it lasts.
func (d *dialer) serve(nc net.Conn) {
	c := d.t.newConn(nc, d.id, d.peer.Site)
	d.cur.Store(c)
	d.t.serve(c, newFrameReader(nc))
	d.cur.CompareAndSwap(c, nil)
}

// sendHello writes the Hello directly, before the connection's writer
// exists, so it is the first frame however much is queued later.
func (t *Transport) sendHello(nc net.Conn) error {
	frame := wire.AppendFrame(nil, &wire.Hello{From: t.cfg.Self, Site: t.cfg.Site})
	nc.SetWriteDeadline(time.Now().Add(t.cfg.handshakeTimeout()))
	if _, err := nc.Write(frame); err != nil {
		return err
	}
	return nc.SetWriteDeadline(time.Time{})
}
