package transport

import (
	"context"
	"log/slog"
	"slices"
	"sync"

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
// destinations, as a replica's batches do. A message in consecutive
// envelopes to several nodes (a client's broadcast, a new leader's call to
// every witness) is encoded once for all of them.
func (t *Transport) SendAll(envs []wire.Envelope) {
	if fs := t.faults.state(); fs != nil {
		for i := range envs {
			t.sendFaulty(fs, envs[i].To, envs[i].Msg)
		}
		return
	}
	sh := sharedFrames(envs)
	defer sh.release()
	frames := sh.of()
	var dests [maxGrouped]wire.NodeID
	n := 0
	for i := range envs {
		to := envs[i].To
		if slices.Contains(dests[:n], to) {
			continue
		}
		if n == len(dests) {
			t.sendRuns(envs, frames)
			return
		}
		dests[n] = to
		n++
	}
	for _, to := range dests[:n] {
		t.sendMatching(envs, frames, to)
	}
}

// shared holds the frames of the messages a SendAll call sends to several
// nodes, encoded once (see sharedFrames); reused through sharedPool.
type shared struct {
	// frames[i] is envs[i]'s frame when it is shared, nil otherwise.
	frames [][]byte
	buf    []byte
	spans  [][2]int
}

var sharedPool = sync.Pool{New: func() any { return new(shared) }}

// sharedFrames encodes once each message that consecutive envelopes carry
// to different nodes, and returns nil when there is none.
func sharedFrames(envs []wire.Envelope) *shared {
	var sh *shared
	for i := 1; i < len(envs); i++ {
		if envs[i].Msg != envs[i-1].Msg || envs[i].To == envs[i-1].To {
			continue
		}
		if sh == nil {
			sh = sharedPool.Get().(*shared)
			sh.buf = sh.buf[:0]
			sh.spans = append(sh.spans[:0], make([][2]int, len(envs))...)
		}
		if sh.spans[i-1] == ([2]int{}) {
			start := len(sh.buf)
			sh.buf = wire.AppendFrame(sh.buf, envs[i-1].Msg)
			sh.spans[i-1] = [2]int{start, len(sh.buf)}
		}
		sh.spans[i] = sh.spans[i-1]
	}
	if sh == nil {
		return nil
	}
	// Slices of buf only once it is written: appending may move it.
	sh.frames = append(sh.frames[:0], make([][]byte, len(envs))...)
	for i, sp := range sh.spans {
		if sp != ([2]int{}) {
			sh.frames[i] = sh.buf[sp[0]:sp[1]]
		}
	}
	return sh
}

// release returns sh to the pool; nil is a no-op.
func (sh *shared) release() {
	if sh == nil {
		return
	}
	clear(sh.frames)
	sharedPool.Put(sh)
}

// of returns the frames, nil when nothing is shared.
func (sh *shared) of() [][]byte {
	if sh == nil {
		return nil
	}
	return sh.frames
}

// sendRuns sends each run of consecutive envelopes to the same node under
// one lock.
func (t *Transport) sendRuns(envs []wire.Envelope, frames [][]byte) {
	for start := 0; start < len(envs); {
		to := envs[start].To
		end := start + 1
		for end < len(envs) && envs[end].To == to {
			end++
		}
		var fs [][]byte
		if frames != nil {
			fs = frames[start:end]
		}
		t.sendMatching(envs[start:end], fs, to)
		start = end
	}
}

func (t *Transport) sendMatching(envs []wire.Envelope, frames [][]byte, to wire.NodeID) {
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
	sent, dropped := c.sendMatching(envs, frames, to)
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
