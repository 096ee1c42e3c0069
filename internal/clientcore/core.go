// Package clientcore defines the contract between a protocol's client core
// and the loop that drives it, and what a finished operation reports.
//
// A client core is a deterministic state machine like a replica core: the
// driver (the client package's loop, or the simulator) submits operations,
// steps it with replies and ticks, then takes the messages to send and the
// operations completed with Ready, and acknowledges with Advance. It links
// no replica code, so a program using the client package carries none.
package clientcore

import "github.com/hybridkv/hybridkv/internal/wire"

// Completion reports the end of one client operation.
type Completion struct {
	ID wire.OpID
	// Op is the operation as submitted.
	Op    wire.Op
	Found bool
	Value []byte
	// Revision is the key's version a Get found, when the replica that
	// answered knew it (zero otherwise).
	Revision wire.Revision
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

// Core is the client side of a protocol, serving many sessions of one
// client process.
type Core interface {
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

// Ready implements Core.
func (o *Outbox) Ready() ([]wire.Envelope, []Completion) { return o.out, o.done }

// Advance implements Core.
func (o *Outbox) Advance() {
	clear(o.out)
	o.out = o.out[:0]
	clear(o.done)
	o.done = o.done[:0]
}
