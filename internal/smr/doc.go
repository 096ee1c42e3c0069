// Package smr is the replicated state machine every protocol shares: a
// raft log, the key-value store applied from it in slot order with its
// session table, the leader's proposal batching, the clock entries that
// let every replica expire idle sessions at the same slot, and the routing
// of results back to clients.
//
// It is the Raft baseline's whole replica. CURP builds on it: a Protocol
// plugged into a Replica decides what to do with each client request and
// hears about every appended and applied entry and every change of
// leadership.
package smr
