// Package smr is the replicated state machine every log-based protocol
// shares: a raft log, the key-value store applied from it in slot order
// with its session table, the leader's proposal batching, the clock
// entries that let every replica expire idle sessions at the same slot,
// and the routing of results back to clients.
//
// It is a library, not a framework: a protocol's core owns a Replica and
// calls it. The core steps raft's messages into it (StepRaft), proposes
// operations, and once a round walks what the round did (Begin, then Next
// until Done, then Output): each entry appended or applied, a snapshot
// restored, a change of leadership, the end of the round's log work, a
// snapshot about to be taken. The Replica goes on only when asked for the
// next event, so the core follows each one up against the state as it
// is right then. Nothing in this package calls into a protocol.
package smr
