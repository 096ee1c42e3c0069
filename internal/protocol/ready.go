package protocol

import "github.com/hybridkv/hybridkv/internal/wire"

// Ready is what a replica core produced in one round. The core does not
// wait for its disk: it hands the driver the round's Write and goes on, and
// whatever must not be seen before that write is durable comes in After.
// Every driver keeps the same rules, which WriteQueue implements:
//
//   - Messages go out at once.
//   - Writes are done in the order the rounds produced them; a driver may
//     fold several waiting writes into one (Write.Merge), so one sync
//     serves them all.
//   - After goes out once this round's write and every earlier round's are
//     done, in round order, even when this round has no write: a reply may
//     rest on state an earlier round wrote (a witness's record of the
//     operation a retry asks about again).
//   - Messages in After addressed to the replica itself are raft's news
//     that the write is durable: the driver hands them back to the core
//     with Step, like any peer's message.
//
// A crash loses the writes not done, and with them what waited in After.
type Ready struct {
	Messages []wire.Envelope
	// Write is nil when the round changed nothing that must be durable.
	Write Write
	After []wire.Envelope
}

// Write is what a round asks the disk to keep (the raft log's entries and
// hard state, witness records), done by the driver's writer.
type Write interface {
	// Do makes the write durable: one sync however much it holds.
	Do() error
	// Merge folds a later round's write, of the same kind, into this one.
	Merge(later Write)
}
