package transport

import "time"

// writeLoop drains the connection's queue to the socket until the
// connection closes.
func (c *conn) writeLoop() {
	defer c.t.wg.Done()
	defer close(c.writerDone)
	// Timers exist only when needed: an undelayed connection without a
	// flush delay wakes on notify alone. The due timer is made on first
	// need, since an injected delay can make a connection delayed while it
	// runs.
	var due, flush *time.Timer
	var dueC <-chan time.Time
	if c.t.cfg.FlushDelay > 0 {
		flush = stoppedTimer()
	}
	for {
		select {
		case <-c.wake:
		case <-dueC:
		case <-c.done:
			return
		}
		if flush != nil && !c.gather(flush) {
			return
		}
		batch, next, more := c.take()
		if len(batch) > 0 && !c.write(batch) {
			return
		}
		if more {
			if due == nil {
				due = stoppedTimer()
				dueC = due.C
			}
			due.Reset(next - c.t.now())
		}
	}
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// gather waits the flush delay so that frames sent meanwhile join the same
// write. It reports false if the connection closed while waiting.
func (c *conn) gather(flush *time.Timer) bool {
	flush.Reset(c.t.cfg.FlushDelay)
	select {
	case <-flush.C:
		return true
	case <-c.done:
		flush.Stop()
		return false
	}
}

// write sends one batch; on failure it closes the connection, which also
// stops the reader, and reports false.
func (c *conn) write(batch []byte) bool {
	_, err := c.nc.Write(batch)
	if cap(c.out) > retainCap {
		c.out = nil
	}
	if err != nil {
		if c.open() {
			c.t.log.Debug("transport: write failed", "peer", c.remote, "err", err)
		}
		c.shutdown()
		return false
	}
	c.t.stats.writes.Add(1)
	c.traffic.sent.Add(uint64(len(batch)))
	return true
}
