package transport

import (
	"context"
	"log/slog"
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Send queues m for node to. m is encoded before Send returns, so the caller
// may reuse it. Send never waits for the network; without a connection to
// to, the message is dropped.
func (t *Transport) Send(to wire.NodeID, m wire.Message) {
	if fs := t.faults.state(); fs != nil {
		t.sendFaulty(fs, to, m)
		return
	}
	c := t.route(to)
	if c == nil || !c.send(m) {
		t.drop(to, 1)
		return
	}
	t.stats.sent.Add(1)
}

// maxGrouped is how many distinct destinations SendAll will gather into one
// lock each; beyond that it locks once per run of equal destinations.
const maxGrouped = 16

// SendAll queues every envelope as Send would. Messages to the same node keep
// their order; it takes each destination's lock once when the batch has few
// destinations, as a replica's batches do.
func (t *Transport) SendAll(envs []wire.Envelope) {
	if fs := t.faults.state(); fs != nil {
		for i := range envs {
			t.sendFaulty(fs, envs[i].To, envs[i].Msg)
		}
		return
	}
	var dests [maxGrouped]wire.NodeID
	n := 0
	for i := range envs {
		to := envs[i].To
		if slices.Contains(dests[:n], to) {
			continue
		}
		if n == len(dests) {
			t.sendRuns(envs)
			return
		}
		dests[n] = to
		n++
	}
	for _, to := range dests[:n] {
		t.sendMatching(envs, to)
	}
}

// sendRuns sends each run of consecutive envelopes to the same node under
// one lock.
func (t *Transport) sendRuns(envs []wire.Envelope) {
	for len(envs) > 0 {
		to := envs[0].To
		n := 1
		for n < len(envs) && envs[n].To == to {
			n++
		}
		t.sendMatching(envs[:n], to)
		envs = envs[n:]
	}
}

func (t *Transport) sendMatching(envs []wire.Envelope, to wire.NodeID) {
	c := t.route(to)
	if c == nil {
		n := 0
		for i := range envs {
			if envs[i].To == to {
				n++
			}
		}
		t.drop(to, n)
		return
	}
	sent, dropped := c.sendMatching(envs, to)
	t.stats.sent.Add(uint64(sent))
	if dropped > 0 {
		t.drop(to, dropped)
	}
}

// route finds the connection that carries messages to a node: the dialed one
// for configured peers, otherwise the one that node opened to us.
func (t *Transport) route(to wire.NodeID) *conn {
	if d, ok := t.dialers[to]; ok {
		return d.cur.Load()
	}
	t.routesMu.RLock()
	c := t.accepted[to]
	t.routesMu.RUnlock()
	return c
}

// sendFaulty sends one message under fault rules: it may be lost, or held
// back longer than the link's emulated delay. Frames are still written in
// the order they were sent.
func (t *Transport) sendFaulty(fs *faultState, to wire.NodeID, m wire.Message) {
	c := t.route(to)
	if c == nil {
		t.drop(to, 1)
		return
	}
	lost, extra := fs.outgoing(to, c.site)
	if lost {
		t.stats.faulted.Add(1)
		return
	}
	if !c.sendDelayed(m, extra) {
		t.drop(to, 1)
		return
	}
	t.stats.sent.Add(1)
}

func (t *Transport) drop(to wire.NodeID, n int) {
	t.stats.dropped.Add(uint64(n))
	if t.log.Enabled(context.Background(), slog.LevelDebug) {
		t.log.Debug("transport: dropping messages, no usable connection", "to", to, "count", n)
	}
}
