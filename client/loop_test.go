package client

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// countingCore is a client core whose every message costs stepCost of
// CPU; it notes how many messages it had stepped at each tick.
type countingCore struct {
	clientcore.Outbox
	stepCost time.Duration

	mu        sync.Mutex
	steps     int
	tickSteps []int
}

func (c *countingCore) Submit(uint64, wire.Op) wire.OpID { return wire.OpID{} }
func (c *countingCore) Cancel(wire.OpID)                 {}
func (c *countingCore) Leader() wire.NodeID              { return 0 }

func (c *countingCore) Step(wire.NodeID, wire.Message) {
	for start := time.Now(); time.Since(start) < c.stepCost; {
	}
	c.mu.Lock()
	c.steps++
	c.mu.Unlock()
}

func (c *countingCore) Tick() {
	c.mu.Lock()
	c.tickSteps = append(c.tickSteps, c.steps)
	c.mu.Unlock()
}

// TestReplyFloodDoesNotHoldBackTicks: the client's re-send and expiry
// timers count its ticks, so a loop kept busy by replies must still take
// a tick every round that finds one due. The flood tops the inbox up 32
// replies at a time, each costing 200 µs to step, so a round (6.4 ms or
// more) outlasts the 5 ms tick and finds one due: 32 replies stepped
// between two ticks in 8 runs of 8, 96 allowed. With the tick left to
// select's draw against the always-ready inbox, half the rounds lost it:
// 192 to 352 in 6 runs. Counted in replies, not time, so a busy machine
// does not fail it.
func TestReplyFloodDoesNotHoldBackTicks(t *testing.T) {
	core := &countingCore{stepCost: 200 * time.Microsecond}
	l := newLoop(core, Config{Tick: 5 * time.Millisecond, Timeout: time.Minute})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		l.run(func([]wire.Envelope) {})
	}()

	const replies = 200 * 32
	for put := 0; put < replies; {
		if l.inbox.Len() >= 32 {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		for range 32 {
			l.inbox.Put(wire.NodeID(1), &wire.Reply{})
		}
		put += 32
	}
	require.Eventually(t, func() bool {
		core.mu.Lock()
		defer core.mu.Unlock()
		return core.steps == replies
	}, 20*time.Second, time.Millisecond)
	l.stop()
	<-stopped

	core.mu.Lock()
	defer core.mu.Unlock()
	most, prev := 0, 0
	for _, steps := range append(core.tickSteps, core.steps) {
		most = max(most, steps-prev)
		prev = steps
	}
	require.LessOrEqual(t, most, 3*32, "the loop stepped %d replies without a tick in between", most)
}
