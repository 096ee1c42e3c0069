package transport

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Transport connects one node to the others. All methods are safe for
// concurrent use.
type Transport struct {
	cfg     Config
	handler Handler
	log     *slog.Logger
	// epoch anchors due times, which are kept as durations so that the
	// queue stores eight bytes per frame instead of a time.Time.
	epoch time.Time

	ln      net.Listener
	dialers map[wire.NodeID]*dialer // fixed at New

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	live   map[net.Conn]struct{} // every open socket, for Close

	routesMu sync.RWMutex
	accepted map[wire.NodeID]*conn // latest accepted connection per node

	faults *Faults

	stats counters
	// traffic has one counter per configured peer, fixed at New;
	// clientTraffic is shared by every other node.
	traffic       map[wire.NodeID]*traffic
	clientTraffic traffic
}

// Stats counts a transport's traffic since New.
type Stats struct {
	Sent     uint64 // messages queued on a connection
	Dropped  uint64 // messages dropped: no connection, or its queue full
	Writes   uint64 // write calls on sockets
	Received uint64 // messages delivered to the handler
	// Faulted counts messages, sent or received, that a fault rule dropped.
	Faulted uint64
}

type counters struct {
	sent, dropped, writes, received, faulted atomic.Uint64
}

// New starts a transport: it listens if cfg.Listen is set and starts dialing
// every peer at once, so connections are usually up before the first
// message; messages sent before a connection is up are dropped.
func New(cfg Config, h Handler) (*Transport, error) {
	if h == nil {
		return nil, errors.New("transport: nil handler")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.Peers = maps.Clone(cfg.Peers)
	t := &Transport{
		cfg:      cfg,
		handler:  h,
		log:      cfg.logger(),
		epoch:    time.Now(),
		dialers:  make(map[wire.NodeID]*dialer, len(cfg.Peers)),
		live:     make(map[net.Conn]struct{}),
		accepted: make(map[wire.NodeID]*conn),
		traffic:  make(map[wire.NodeID]*traffic, len(cfg.Peers)),
		faults:   cfg.Faults,
	}
	if t.faults == nil {
		t.faults = new(Faults)
	}
	// The maps are complete before any goroutine starts: accepted
	// connections and dialers read them without a lock.
	for id, p := range cfg.Peers {
		t.dialers[id] = &dialer{t: t, id: id, peer: p}
		t.traffic[id] = &traffic{}
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	if cfg.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			t.cancel()
			return nil, err
		}
		t.ln = ln
		t.wg.Add(1)
		go t.acceptLoop()
	}
	for _, d := range t.dialers {
		t.wg.Add(1)
		go d.run()
	}
	return t, nil
}

// Addr returns the listening address, or nil for a transport that only
// dials.
func (t *Transport) Addr() net.Addr {
	if t.ln == nil {
		return nil
	}
	return t.ln.Addr()
}

// Connected reports whether messages to a node currently have a connection
// to travel on.
func (t *Transport) Connected(to wire.NodeID) bool {
	c := t.route(to)
	return c != nil && c.open()
}

// Stats returns the traffic counters.
func (t *Transport) Stats() Stats {
	return Stats{
		Sent:     t.stats.sent.Load(),
		Dropped:  t.stats.dropped.Load(),
		Writes:   t.stats.writes.Load(),
		Received: t.stats.received.Load(),
		Faulted:  t.stats.faulted.Load(),
	}
}

// Faults returns the fault rules the transport obeys, for changing them
// while it runs.
func (t *Transport) Faults() *Faults { return t.faults }

// Close stops listening and dialing, closes every connection and waits for
// all of the transport's goroutines, including handlers in progress. Queued
// messages not yet written are discarded.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	live := slices.Collect(maps.Keys(t.live))
	t.mu.Unlock()
	t.cancel()
	var err error
	if t.ln != nil {
		err = t.ln.Close()
	}
	for _, nc := range live {
		nc.Close()
	}
	t.wg.Wait()
	return err
}

// now is the current time as a due time.
func (t *Transport) now() time.Duration { return time.Since(t.epoch) }

// retrack replaces a tracked socket by the TLS connection over it, so
// Close and the connection's end reach the same key; false if closed.
func (t *Transport) retrack(raw, tc net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, raw)
	if t.closed {
		tc.Close()
		return false
	}
	t.live[tc] = struct{}{}
	return true
}

// track records an open socket so Close can reach it; it refuses once the
// transport is closing.
func (t *Transport) track(nc net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.live[nc] = struct{}{}
	return true
}

func (t *Transport) untrack(nc net.Conn) {
	t.mu.Lock()
	delete(t.live, nc)
	t.mu.Unlock()
	nc.Close()
}

// sleep waits d unless the transport closes first, and reports whether it
// is still open.
func (t *Transport) sleep(d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// serve runs an established connection: a writer goroutine, and reading on
// the calling goroutine until the connection fails or the transport closes.
func (t *Transport) serve(c *conn, r *frameReader) {
	t.wg.Add(1)
	go c.writeLoop()
	err := c.readLoop(r)
	c.shutdown()
	<-c.writerDone
	t.untrack(c.nc)
	t.logEnd(err, "peer", c.remote)
}

// logEnd reports why a connection ended, loudly only for bad input; who
// names the other end as log attributes.
func (t *Transport) logEnd(err error, who ...any) {
	var bad *malformedError
	switch {
	case errors.As(err, &bad):
		t.log.Warn("transport: closing connection", append(who, "err", err)...)
	case t.ctx.Err() != nil:
	default:
		t.log.Debug("transport: connection ended", append(who, "err", err)...)
	}
}

// tuneTCP states the socket options the transport relies on. Nagle's
// algorithm would delay the small frames the protocols live on; batching is
// done by the writer instead. Kernel buffer sizes are left to the kernel,
// because setting them explicitly turns off Linux's autotuning, which a
// high-latency link needs to keep enough bytes in flight.
func tuneTCP(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
}
