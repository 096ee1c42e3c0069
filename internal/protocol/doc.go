// Package protocol defines the contract between protocol cores and the code
// that drives them.
//
// A core is a deterministic state machine in the shape of etcd raft's Ready
// loop: it has no goroutines, locks, clocks or randomness of its own. A driver
// (package node over TCP, or the simulator) feeds it messages, ticks and flushes, then
// collects what it produced with Ready and acknowledges with Advance. Any
// randomness a core needs (election jitter) comes from a source the driver
// seeds, so the simulator can replay a run from its seed.
package protocol
