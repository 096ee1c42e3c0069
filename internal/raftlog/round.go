package raftlog

import "go.etcd.io/raft/v3/raftpb"

// Round is what one call of Ready produced, for the log's owner to act on
// in order. The log never calls its owner: the owner asks for a Round and
// does what it says.
type Round struct {
	// Events are, in the order raft produced them, the snapshot to
	// install, the entries appended, the committed entries to apply and
	// the messages to send.
	Events []Event
	// Write is what must be durable before the SendAfterWrite events'
	// messages leave; nil if nothing.
	Write *Write
}

// EventKind says what an Event asks of the owner.
type EventKind uint8

const (
	// Restore: replace the applied state with the snapshot's (Index,
	// Data); the log now starts after Index.
	Restore EventKind = iota + 1
	// Append: the entry at Index (Data, empty for raft's own entries) was
	// added to this replica's log, not yet durable. An Index at or below
	// the last one appended replaced the log from there.
	Append
	// Apply: the committed entry at Index (Data) is the next to apply.
	Apply
	// Send: Msg may leave at once.
	Send
	// SendAfterWrite: Msg must wait until the round's Write is durable;
	// its To may be this replica, whose log must then Step it.
	SendAfterWrite
)

// Event is one thing a Round asks of the owner.
type Event struct {
	Kind  EventKind
	Index uint64
	Data  []byte
	// Msg is a Send's or SendAfterWrite's message; the owner owns it.
	Msg *raftpb.Message
}
