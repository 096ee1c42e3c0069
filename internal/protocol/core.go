package protocol

import (
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Replica is the replica side of a protocol.
type Replica interface {
	// Step consumes one message that arrived from node from.
	Step(from wire.NodeID, m wire.Message)
	// Tick advances the core's logical clock by one tick.
	Tick()
	// Flush hands the operations gathered since the last flush to the log
	// as one batch.
	Flush()
	// Pending reports whether gathered operations wait for Flush. Every
	// driver follows the same rule after handing the core anything (a
	// message, a tick, a flush): if operations are pending, flush at once
	// when the batch delay is zero, otherwise once the delay has passed
	// since they started waiting. Operations gather outside request steps
	// too (a new leader's replay, requests released when an entry applies),
	// so a driver must not guess from what it delivered.
	Pending() bool
	// Ready returns what the core produced since the last Advance (see
	// Ready). Its Messages are valid until Advance; its Write and After
	// belong to the driver.
	Ready() Ready
	// Advance tells the core its last Ready was handled.
	Advance()
	// Status reports the core's view for monitoring and tests.
	Status() Status
	// Metrics reports the core's positions and sizes for monitoring. It
	// costs more than Status (it walks per-follower progress and the
	// session table), so drivers call it only when asked.
	Metrics() Metrics
}

// Status is a replica's externally visible state.
type Status struct {
	ID      wire.NodeID
	Leader  wire.NodeID
	Term    uint64
	Commit  uint64
	Applied uint64
	// Digest summarises the applied key-value state; equal digests at equal
	// applied indexes mean equal states.
	Digest uint64
}
