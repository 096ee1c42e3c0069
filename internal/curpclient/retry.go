package curpclient

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// retry is an operation's place in the re-send queue; an entry whose
// operation completed, or was re-sent since, is skipped when it comes up.
type retry struct {
	p     *Pending
	dueAt uint64
}

// retryLater schedules p's re-send retryTicks from now. The queue is in
// due order, as every entry is due retryTicks after it was queued, so a
// tick looks only at what is due (and the entries of operations completed
// meanwhile), not at every operation in flight.
func (c *Client) retryLater(p *Pending) {
	p.dueAt = c.ticks + uint64(c.retryTicks)
	// Taken from the front, appended at the back: the array's consumed
	// front goes when append next moves it.
	c.retries = append(c.retries, retry{p, p.dueAt})
}

// Now is the client's clock: the number of ticks so far.
func (c *Client) Now() uint64 { return c.ticks }

// HeardSince reports whether a message from replica r arrived at or after
// tick t.
func (c *Client) HeardSince(r wire.NodeID, t uint64) bool {
	at, ok := c.heard[r]
	return ok && at >= t
}

// RetryTicks is how many ticks an unanswered request waits before a resend.
func (c *Client) RetryTicks() int { return c.retryTicks }

// Tick implements clientcore.Core: plain CURP re-sends every due
// operation down the strong path.
func (c *Client) Tick() {
	for _, p := range c.Due() {
		c.Resend(p)
	}
}

// Due advances the clock by a tick and returns the operations unanswered
// for a retry period, each already scheduled for its next re-send, for the
// caller to re-send: strong ones with Resend, weak ones on its own path.
// They come in identity order so that a simulated run does not depend on
// map iteration order.
func (c *Client) Due() []*Pending {
	c.ticks++
	var due []*Pending
	for len(c.retries) > 0 && c.retries[0].dueAt <= c.ticks {
		r := c.retries[0]
		c.retries[0] = retry{}
		c.retries = c.retries[1:]
		if p := c.pending[r.p.Req.Op.ID]; p == r.p && p.dueAt == r.dueAt {
			due = append(due, p)
		}
	}
	for _, p := range due {
		c.retryLater(p)
	}
	slices.SortFunc(due, func(a, b *Pending) int { return a.Req.Op.ID.Compare(b.Req.Op.ID) })
	return due
}

// Resend re-sends p's request to its targets, marked a retry.
func (c *Client) Resend(p *Pending) {
	retry := p.Req
	c.MarkRetry(&retry)
	c.sendTo(p.Targets, &retry)
}

// MarkRetry marks req a re-send and brings its AckedBelow up to date with
// what its session has completed since.
func (c *Client) MarkRetry(req *wire.Request) {
	req.Flags |= wire.FlagRetry
	req.AckedBelow = c.sessions.AckedBelow(req.Op.ID.Session)
}
