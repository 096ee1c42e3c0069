package transport

import (
	"net"
	"sync"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// conn is one established TCP connection, dialed or accepted, after the
// Hello exchange. Senders append encoded frames to its queue; its writer
// goroutine drains the queue to the socket; a reader goroutine (the one that
// set the connection up) feeds incoming frames to the handler.
type conn struct {
	t      *Transport
	nc     net.Conn
	remote wire.NodeID
	// site is the remote node's site, for sampling delays.
	site uint32
	// delayed says frames wait for a due time. It is false whenever the
	// base delay to the remote site is zero, which keeps timers and clock
	// reads off the common path, until an injected fault delays a frame.
	// Guarded by mu.
	delayed bool
	// traffic counts the bytes this connection writes and reads.
	traffic *traffic

	mu sync.Mutex
	// buf[off:] holds the encoded frames not yet taken by the writer.
	buf []byte
	off int
	// marks[markOff:] has one entry per queued frame, in order; used only
	// when delayed.
	marks   []frameMark
	markOff int
	// lastDue is the due time of the last frame queued; later frames never
	// fall due before it, which keeps FIFO order under jitter.
	lastDue time.Duration
	closed  bool

	// out is the writer's buffer, swapped with buf so that the steady state
	// allocates nothing. Only the writer goroutine touches it.
	out []byte

	wake       chan struct{}
	done       chan struct{}
	writerDone chan struct{}
	closeOnce  sync.Once
}

// frameMark is one delayed frame: its length in buf and when it may be
// written, measured from the transport's epoch.
type frameMark struct {
	size int
	due  time.Duration
}

func (t *Transport) newConn(nc net.Conn, remote wire.NodeID, site uint32) *conn {
	return &conn{
		t:          t,
		nc:         nc,
		remote:     remote,
		site:       site,
		delayed:    t.cfg.Delay != nil && t.cfg.Delay.Base(t.cfg.Site, site) > 0,
		traffic:    t.trafficOf(remote),
		wake:       make(chan struct{}, 1),
		done:       make(chan struct{}),
		writerDone: make(chan struct{}),
	}
}

// notify wakes the writer without ever blocking the sender; one pending
// wake-up is enough because the writer takes everything queued.
func (c *conn) notify() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// open reports whether the connection still accepts frames.
func (c *conn) open() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// shutdown closes the connection once, from whichever side notices first;
// closing the socket unblocks the reader and the writer.
func (c *conn) shutdown() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.buf, c.off = nil, 0
		c.marks, c.markOff = nil, 0
		c.mu.Unlock()
		close(c.done)
		c.nc.Close()
	})
}
