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

// Completion reports the end of one client operation.
type Completion struct {
	ID wire.OpID
	// Op is the operation as submitted.
	Op    wire.Op
	Found bool
	Value []byte
	// Slot is the log index the operation took (0 when unknown, e.g. a
	// weak read answered from a cache).
	Slot uint64
	// Path says how the operation completed.
	Path Path
	// Reason says why a strong operation took the slow path.
	Reason SlowReason
}

// FinalSlot is the operation's slot when it is known to be final: a
// fast-path result carries the slot the leader speculated with, which a new
// leader's replay may change.
func (c *Completion) FinalSlot() uint64 {
	if c.Path == PathFast {
		return 0
	}
	return c.Slot
}

// SlowReason says why a strong operation left the fast path.
type SlowReason uint8

const (
	ReasonNone SlowReason = iota
	// ReasonConflict: the leader or a witness refused (a conflicting
	// pending operation).
	ReasonConflict
	// ReasonCausalDep: a superquorum answered, but not all of it held the
	// session's uncommitted weak writes (CURP-HO).
	ReasonCausalDep
	// ReasonReadDep: a superquorum answered, but disagreed on the latest
	// pending weak write of the read's key (CURP-HO).
	ReasonReadDep
	numReasons
)

// NumReasons sizes arrays indexed by SlowReason.
const NumReasons = int(numReasons)

func (r SlowReason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonConflict:
		return "conflict"
	case ReasonCausalDep:
		return "causal-dep"
	case ReasonReadDep:
		return "read-dep"
	}
	return "unknown"
}

// Path classifies how an operation completed, for the benchmark's fast-path
// ratio and for diagnosis.
type Path uint8

const (
	// PathFast: the leader's and the witnesses' oks reached a superquorum.
	PathFast Path = iota + 1
	// PathSlow: the fast path failed (a conflict made the leader or a
	// witness refuse) and the operation waited for commit and execution.
	PathSlow
	// PathWeak: a weak operation.
	PathWeak
	// PathCommitted: the committed result arrived before the superquorum
	// did, with no refusal seen. It happens where commit costs no more than
	// the fast path, e.g. to a client next to the leader; the protocol never
	// fell back, so it counts towards the fast-path ratio.
	PathCommitted
	// PathLog: a protocol with no fast path (Raft) completed the operation
	// through the log.
	PathLog
)

func (p Path) String() string {
	switch p {
	case PathFast:
		return "fast"
	case PathSlow:
		return "slow"
	case PathWeak:
		return "weak"
	case PathCommitted:
		return "committed"
	case PathLog:
		return "log"
	}
	return "unknown"
}

// Client is the client side of a protocol, serving many sessions of one
// client process.
type Client interface {
	// Submit starts an operation of a session and returns its identity.
	// op.ID is assigned by the core.
	Submit(session uint64, op wire.Op) wire.OpID
	// Cancel forgets an operation the caller no longer waits for. Whether
	// it took effect stays unknown.
	Cancel(id wire.OpID)
	// Step consumes one message that arrived from node from.
	Step(from wire.NodeID, m wire.Message)
	// Tick advances the core's logical clock; operations unanswered for
	// too long are re-sent with the same identity.
	Tick()
	// Ready returns messages to send and operations completed since the
	// last Advance. Both slices are valid until Advance.
	Ready() ([]wire.Envelope, []Completion)
	Advance()
	// Leader is the replica the client believes leads, or 0.
	Leader() wire.NodeID
}

// Outbox is what a client core has produced since the driver last took
// it: embedding it gives a core its Ready and Advance.
type Outbox struct {
	out  []wire.Envelope
	done []Completion
}

// Send queues a message.
func (o *Outbox) Send(to wire.NodeID, m wire.Message) {
	o.out = append(o.out, wire.Envelope{To: to, Msg: m})
}

// Finish queues a completion.
func (o *Outbox) Finish(c Completion) { o.done = append(o.done, c) }

// Ready implements Client.
func (o *Outbox) Ready() ([]wire.Envelope, []Completion) { return o.out, o.done }

// Advance implements Client.
func (o *Outbox) Advance() {
	clear(o.out)
	o.out = o.out[:0]
	clear(o.done)
	o.done = o.done[:0]
}
