package curp

import (
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// broken re-introduces, for mutation tests, bugs the protocols once had, so
// the checked simulation can show that it catches each of them. Only a
// build with the mutations tag can set it (see Break); in every other build
// it stays false.
var broken mutationFlags

type mutationFlags struct {
	// logInRecovery: a recovering leader logs weak-path requests before
	// its replay.
	logInRecovery bool
	// replayUnordered: replays skip the session's weak-write order, both
	// in the replay's order and in CURP-HO's hold of a replay until the
	// session's previous weak write is logged.
	replayUnordered bool
	// trustRestarted: a restarted witness whose records were lost counts
	// as complete.
	trustRestarted bool
	// dropReplacedRecords: a replica's raft log entries that kept its
	// records as leader are replaced without logging the records.
	dropReplacedRecords bool
	// voteTies: a new leader orders its replay by the witnesses' votes
	// alone, a tie going to the first witness (see voteOrder).
	voteTies bool
	// repliesBeforeWrite: replies to strong writes, and reads that tell of
	// pooled writes, go out before the round's write is durable too.
	repliesBeforeWrite bool
	// namesBeforeDurable: a read's reply that names pooled writes goes
	// out before their records are durable (see NamedDurable).
	namesBeforeDurable bool
	// poolIgnoresTxns: the conflict check passes over pooled transactions,
	// so a leader answers a strong read speculatively from an applied
	// state that a transaction it logged before the read has yet to
	// change.
	poolIgnoresTxns bool
	// speculateTxns: witnesses record transactions as any other
	// operation, and the leader answers one speculatively, from a copy of
	// its applied state (speculateTxn), so that it may complete on the
	// fast path.
	speculateTxns bool
}

// speculateTxn runs a transaction logged at index on a copy of the
// applied state, for the speculateTxns mutation; ok is false when the
// state cannot be copied now (a snapshot is being encoded from it).
func speculateTxn(st *kvstore.Store, index uint64, op *wire.Op) (found bool, value []byte, ok bool) {
	if st.Frozen() {
		return false, nil, false
	}
	c, err := kvstore.Restore(st.Snapshot())
	if err != nil {
		return false, nil, false
	}
	res, _ := c.Apply(index, op, 0)
	return res.Found, res.Value, true
}
