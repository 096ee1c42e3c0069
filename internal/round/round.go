package round

import (
	"math"
	"time"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Limits bound what one round takes of the clients' messages waiting. A
// round takes every replica's message but at most Clients of the
// clients', Chunk at a time with the replicas' that arrived meanwhile,
// and ends early once its driver's budget is spent (asked between
// chunks): raft's heartbeats, votes and acknowledgements, which all go
// out between rounds, must not wait behind a flood of client requests.
type Limits struct {
	Clients int
	Chunk   int
}

// Deployed are the limits package node runs with. At the tens of microseconds a
// request costs, a round of 4,096 stays within about a tenth of a second;
// the node's budget (5 ms of wall time) bounds it when requests cost
// more: unbounded, rounds of seconds under 3 x 256 sessions let election
// timeouts fire one after another, and so did 4,096 requests of hundreds
// of microseconds each (CURP-HO replicas holding thousands of weak writes
// no leader had logged yet).
var Deployed = Limits{Clients: 4096, Chunk: 16}

// Unlimited takes every message waiting.
var Unlimited = Limits{Clients: math.MaxInt, Chunk: math.MaxInt}

// Take steps into step the messages of one round from in: every
// replica's, the clients' within lim, stopping between chunks once spent
// (nil: never) reports true. It returns how many messages it stepped.
// What is left waits for the next round, whose wake-up the inbox posts.
func Take(in *Inbox, lim Limits, spent func() bool, step func(from wire.NodeID, m wire.Message)) int {
	n := 0
	for taken := 0; taken < lim.Clients; {
		msgs := in.TakeUpTo(min(lim.Chunk, lim.Clients-taken))
		for _, m := range msgs {
			if m.From.IsClient() {
				taken++
			}
			step(m.From, m.Msg)
		}
		n += len(msgs)
		if len(msgs) < lim.Chunk || spent != nil && spent() {
			break
		}
	}
	return n
}

// Loop is the part of a replica's loop every driver shares: what one
// round does to its core. The driver runs a round whenever something
// happened (messages arrived, a tick, the batch timer fired, a write
// became durable), sends the round's Messages, queues its write and what
// waits for it (protocol.WriteQueue), then calls Core.Advance.
type Loop struct {
	Core   protocol.Replica
	Inbox  *Inbox
	Limits Limits
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
// steps the round's messages (Take), applies the batching rule and returns
// what the core produced. arm tells the driver to start its batch timer
// for BatchDelay.
func (r *Loop) Round(ev Event, spent func() bool) (rd protocol.Ready, arm bool) {
	for range ev.Ticks {
		r.Core.Tick()
	}
	if ev.BatchDue {
		r.armed = false
		r.Core.Flush()
	}
	Take(r.Inbox, r.Limits, spent, r.Core.Step)
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
func (r *Loop) Restart(core protocol.Replica) {
	r.Core, r.armed = core, false
}
