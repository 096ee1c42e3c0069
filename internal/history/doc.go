// Package history records what a benchmark or test run did, so that the
// run can be checked for consistency violations afterwards.
//
// A run produces one [File]: every operation a client invoked ([Event]),
// the final state of every replica ([ReplicaState], for the convergence
// check) and a free-form list of the faults injected during the run.
//
// Each event carries the operation's identity, level, kind and key, the
// value it wrote or read, its invocation and return times on a monotonic
// clock that starts with the run, and its [Outcome]. Only an OK outcome
// says what happened; a failed or unanswered operation may or may not have
// taken effect, and the checker treats both alike. A transaction (kind
// wire.Txn) carries its program as its value and, when it completed, its
// answer as its result ([Event.Txn] decodes both).
//
// Times must come from one clock domain: the checker derives session order
// and real-time order from them, so events recorded by different processes
// are comparable only if their clocks share an origin.
//
// The on-disk format is compact and self-checking: the magic "HKVH3", then
// length-prefixed records (events, replica states, faults), then an end
// record holding the record count and a CRC-32C of everything before it.
// [Decode] rejects truncated, corrupt or trailing input with an error
// instead of returning a partial history that would check clean. It also
// reads version 2 ("HKVH2"), whose events have no result and which holds
// no transactions, and version 1 ("HKVH1"), whose keys were integers as
// well: they come back as their decimal form.
package history
