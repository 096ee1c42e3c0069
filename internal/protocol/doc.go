// Package protocol defines the contract between protocol cores and the code
// that drives them.
//
// A core is a deterministic state machine in the shape of etcd raft's Ready
// loop: it has no goroutines, locks, clocks or randomness of its own. A
// driver (package node over TCP, or the simulator) feeds it messages, ticks
// and flushes, then
// collects what it produced with Ready and acknowledges with Advance. Any
// randomness a core needs (election jitter) comes from a source the driver
// seeds, so the simulator can replay a run from its seed.
//
// What drivers share lives here too: what one round does to a core (Loop)
// and the order in which its writes and what waits for them go out
// (WriteQueue). How a core is built is package coreconfig's; the contract
// names nothing of the log, the disk or the witnesses.
package protocol
