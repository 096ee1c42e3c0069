package protocol

import (
	"time"

	"github.com/hybridkv/hybridkv/internal/round"
)

// Loop is the part of a replica's loop every driver shares: what one
// round does to its core. The driver runs a round whenever something
// happened (messages arrived, a tick, the batch timer fired, a write
// became durable), sends the round's Messages, queues its write and what
// waits for it (WriteQueue), then calls Core.Advance.
type Loop struct {
	Core   Replica
	Inbox  *round.Inbox
	Limits round.Limits
	// BatchDelay is how long the first request of a batch may wait for
	// others before the batch is proposed; 0 proposes at the end of the
	// round that took it.
	BatchDelay time.Duration
	// armed: the driver's batch timer runs.
	armed bool
}

// Event is what woke a round besides the inbox.
type Event struct {
	// Ticks is how many of the core's ticks passed.
	Ticks int
	// BatchDue: the batch timer fired.
	BatchDue bool
}

// Round ticks the core, proposes its batch if the batch timer fired,
// steps the round's messages (round.Take), applies the batching rule and returns
// what the core produced. arm tells the driver to start its batch timer
// for BatchDelay.
func (r *Loop) Round(ev Event, spent func() bool) (rd Ready, arm bool) {
	for range ev.Ticks {
		r.Core.Tick()
	}
	if ev.BatchDue {
		r.armed = false
		r.Core.Flush()
	}
	round.Take(r.Inbox, r.Limits, spent, r.Core.Step)
	if r.Core.Pending() {
		switch {
		case r.BatchDelay <= 0:
			r.Core.Flush()
		case !r.armed:
			r.armed, arm = true, true
		}
	}
	return r.Core.Ready(), arm
}

// Restart forgets the batch timer, for a core that replaced a crashed one.
func (r *Loop) Restart(core Replica) {
	r.Core, r.armed = core, false
}
