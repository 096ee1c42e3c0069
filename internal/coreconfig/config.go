// Package coreconfig holds what every replica core is built from: its
// identity and peers, raft's timing, its disk and witness log, and the
// thresholds tests shrink. The contract that drives a core (package
// protocol) names none of it.
package coreconfig

import (
	"math/rand/v2"

	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Config is what every replica core is built from.
type Config struct {
	ID    wire.NodeID
	Peers []wire.NodeID // all replicas, including ID
	// ElectionTicks is the base election timeout; followers wait a random
	// timeout in [ElectionTicks, 2*ElectionTicks) drawn from Rand.
	ElectionTicks  int
	HeartbeatTicks int
	Rand           *rand.Rand
	// Disk keeps the replica's raft state across restarts; the replica
	// resumes from whatever it holds.
	Disk raftlog.Disk
	// Bootstrap lets a blank Disk start a new cluster of Peers. Without it
	// a blank disk is refused (see raftlog.New): a replica that lost its
	// disk must not vote again in a term it may have voted in.
	Bootstrap bool
	// Records keeps a CURP witness's records across restarts; nil keeps
	// them in memory only (see the curp package's witnesses).
	Records witness.Log
	// SessionExpiryTicks is how long, in ticks, a session may apply
	// nothing before every replica forgets it (see the smr package);
	// zero keeps every session for good.
	SessionExpiryTicks int
	// CompactEvery, CompactKeep and MemoryKeep, when not zero, replace
	// the replica's log compaction thresholds (see the smr package's
	// Options): the simulator sets small ones so that its short runs
	// compact their logs and catch lagging followers up by snapshot.
	CompactEvery, CompactKeep, MemoryKeep uint64
}
