package protocol

import (
	"math/rand/v2"

	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
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

// ReplicaConfig is what every replica core is built from.
type ReplicaConfig struct {
	ID    wire.NodeID
	Peers []wire.NodeID // all replicas, including ID
	// ElectionTicks is the base election timeout; followers wait a random
	// timeout in [ElectionTicks, 2*ElectionTicks) drawn from Rand.
	ElectionTicks  int
	HeartbeatTicks int
	Rand           *rand.Rand
	// Disk keeps the replica's raft state across restarts; the replica
	// resumes from whatever it holds.
	Disk raftlog.Disk
	// Bootstrap lets a blank Disk start a new cluster of Peers. Without it
	// a blank disk is refused (see raftlog.New): a replica that lost its
	// disk must not vote again in a term it may have voted in.
	Bootstrap bool
	// Records keeps a CURP witness's records across restarts; nil keeps
	// them in memory only (see the curp package's witnesses).
	Records witness.Log
	// SessionExpiryTicks is how long, in ticks, a session may apply
	// nothing before every replica forgets it (see the smr package);
	// zero keeps every session for good.
	SessionExpiryTicks int
	// CompactEvery, CompactKeep and MemoryKeep, when not zero, replace
	// the replica's log compaction thresholds (see the smr package's
	// Options): the simulator sets small ones so that its short runs
	// compact their logs and catch lagging followers up by snapshot.
	CompactEvery, CompactKeep, MemoryKeep uint64
}
