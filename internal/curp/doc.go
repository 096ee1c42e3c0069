// Package curp implements the CURP protocol (Park and Ousterhout, NSDI 2019)
// in front of a raft log, as deterministic replica and client cores.
//
// A client sends each operation to every replica. Followers act as witnesses:
// they record the operation unless a conflicting unapplied one is already
// recorded, and say whether they did. The leader appends the operation to the
// raft log and answers at once with a speculative result, marked not-ok when
// an earlier uncommitted operation conflicts. The client is done after one
// round trip when the leader's ok and the witnesses' oks reach a superquorum
// (f + ⌈f/2⌉ + 1 replicas, leader included); otherwise it waits for the
// leader's sync reply, sent after commit and in-order execution.
//
// A new leader first gathers the witnesses' records from a majority and
// re-proposes every operation that at least ⌈f/2⌉+1 of them recorded; every
// operation completed on the fast path is among them. The session table in
// the replicated state drops duplicates, so a replayed or retried operation
// takes effect once.
package curp
