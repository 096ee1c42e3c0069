package transport

import (
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// maxPending bounds the unsent bytes a connection may hold. A peer that
// stops reading would otherwise grow the queue without limit; past the bound
// messages are dropped, which the protocols already tolerate.
const maxPending = 64 << 20

// retainCap is the largest buffer kept for reuse, so that one large message
// (a raft snapshot) does not pin its memory for the life of the connection.
const retainCap = 4 << 20

// send queues one message and reports whether it was accepted.
func (c *conn) send(m wire.Message) bool {
	c.mu.Lock()
	wasEmpty := c.emptyLocked()
	ok := c.appendLocked(m, nil, c.clock(), 0)
	c.mu.Unlock()
	if ok && wasEmpty {
		c.notify()
	}
	return ok
}

// sendDelayed queues one message to be written no earlier than extra past
// its emulated delay. A connection that was not delayed becomes so for the
// rest of its life: cheaper than switching back, and it happens only under
// injected faults.
func (c *conn) sendDelayed(m wire.Message, extra time.Duration) bool {
	c.mu.Lock()
	wasEmpty := c.emptyLocked()
	if extra > 0 && !c.delayed {
		c.startDelayingLocked()
	}
	ok := c.appendLocked(m, nil, c.clock(), extra)
	c.mu.Unlock()
	if ok && wasEmpty {
		c.notify()
	}
	return ok
}

// startDelayingLocked turns on due times; whatever is already queued is
// due at once.
func (c *conn) startDelayingLocked() {
	c.delayed = true
	if n := len(c.buf) - c.off; n > 0 {
		c.marks = append(c.marks[:0], frameMark{size: n})
		c.markOff = 0
	}
}

// sendMatching queues, under one lock, every envelope addressed to to;
// frames, when not nil, holds some of their messages already encoded.
func (c *conn) sendMatching(envs []wire.Envelope, frames [][]byte, to wire.NodeID) (sent, dropped int) {
	c.mu.Lock()
	wasEmpty := c.emptyLocked()
	now := c.clock()
	for i := range envs {
		if envs[i].To != to {
			continue
		}
		var frame []byte
		if frames != nil {
			frame = frames[i]
		}
		if c.appendLocked(envs[i].Msg, frame, now, 0) {
			sent++
		} else {
			dropped++
		}
	}
	c.mu.Unlock()
	if sent > 0 && wasEmpty {
		c.notify()
	}
	return sent, dropped
}

// clock returns the current time for due-time arithmetic, or zero when the
// connection is not delayed and no clock read is needed.
func (c *conn) clock() time.Duration {
	if !c.delayed {
		return 0
	}
	return c.t.now()
}

// emptyLocked reports whether nothing is queued. The writer is woken only on
// the empty to non-empty transition: while frames are queued, either a
// wake-up is pending or the writer has yet to take them, or its timer is set
// for the first of them.
func (c *conn) emptyLocked() bool { return c.off == len(c.buf) }

// appendLocked queues m, whose frame is frame when the caller encoded it
// already (nil: encoded here), and reports whether it was accepted.
func (c *conn) appendLocked(m wire.Message, frame []byte, now, extra time.Duration) bool {
	if c.closed || len(c.buf)-c.off >= maxPending {
		return false
	}
	start := len(c.buf)
	if frame != nil {
		c.buf = append(c.buf, frame...)
	} else {
		c.buf = wire.AppendFrame(c.buf, m)
	}
	if c.delayed {
		due := now + extra
		if d := c.t.cfg.Delay; d != nil {
			due += d.Sample(c.t.cfg.Site, c.site)
		}
		due = max(c.lastDue, due)
		c.lastDue = due
		c.marks = append(c.marks, frameMark{size: len(c.buf) - start, due: due})
	}
	return true
}

// take removes the frames that may be written now. When frames remain that
// are not yet due, more is true and next is when the first of them falls due.
func (c *conn) take() (batch []byte, next time.Duration, more bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.delayed {
		return c.swapLocked(), 0, false
	}
	return c.takeDueLocked(c.t.now())
}

// swapLocked hands the whole queue to the writer by exchanging buffers.
func (c *conn) swapLocked() []byte {
	batch := c.buf[c.off:]
	c.buf, c.out = c.out[:0], c.buf
	c.off = 0
	return batch
}

func (c *conn) takeDueLocked(now time.Duration) ([]byte, time.Duration, bool) {
	n, size := 0, 0
	for _, m := range c.marks[c.markOff:] {
		if m.due > now {
			break
		}
		n++
		size += m.size
	}
	if c.markOff+n == len(c.marks) {
		c.marks, c.markOff = c.marks[:0], 0
		return c.swapLocked(), 0, false
	}
	c.markOff += n
	next := c.marks[c.markOff].due
	if n == 0 {
		return nil, next, true
	}
	c.out = append(c.out[:0], c.buf[c.off:c.off+size]...)
	c.off += size
	c.compactLocked()
	return c.out, next, true
}

// compactLocked moves the queued remainder to the front of its buffers once
// at least as much has been consumed as remains, so each byte is moved at
// most once on average and the buffers do not grow without bound.
func (c *conn) compactLocked() {
	if c.off >= len(c.buf)-c.off {
		c.buf = c.buf[:copy(c.buf, c.buf[c.off:])]
		c.off = 0
	}
	if c.markOff >= len(c.marks)-c.markOff {
		c.marks = c.marks[:copy(c.marks, c.marks[c.markOff:])]
		c.markOff = 0
	}
}
