package protocol

import "github.com/hybridkv/hybridkv/internal/wire"

// Metrics is a replica core's internal positions and sizes, for monitoring
// a long run: where replication stands and how large the state a core keeps
// in memory has grown. A core computes it on demand, on its own thread (the
// driver asks between steps), and returns it by value, so reading it never
// races the core and costs nothing between reads.
type Metrics struct {
	Status
	// LeaderChanges counts the times this replica learned of a leader (a
	// new one, or the same one again after an election), since it started.
	LeaderChanges uint64
	// SnapshotsInstalled counts the snapshots from a leader this replica
	// installed in place of its state, since it started: it lagged behind
	// what the leader's log still held.
	SnapshotsInstalled uint64
	// LogFirst and LogLast bound the raft log entries held in memory
	// (LogLast - LogFirst + 1 of them); compaction moves LogFirst up.
	LogFirst, LogLast uint64
	// Followers is, on the leader, each follower's replication progress;
	// empty elsewhere.
	Followers []FollowerProgress
	// Batch counts operations gathered and not yet proposed.
	Batch int
	// InFlight counts operations this leader proposed and has not applied.
	InFlight int
	// AwaitingReply counts operations whose client is to be answered when
	// they apply.
	AwaitingReply int
	// Keys is the number of keys in the applied state.
	Keys int
	// Sessions is the size of the session table (one entry per client
	// session that applied an operation within the session expiry),
	// Replies the results it keeps for duplicate detection.
	Sessions, Replies int
	// SessionsExpired counts the sessions forgotten for being idle since
	// the replica started.
	SessionsExpired uint64
	// Own holds the protocol's own metrics, in the order it lists them.
	Own []Measure
}

// Measure is one of a protocol's own metrics, which a replica's metrics
// endpoint exports as hybridkv_<Name> beside the shared ones.
type Measure struct {
	Name, Help string
	// Counter: the value only grows; otherwise it is a gauge.
	Counter bool
	Value   float64
}

// Measure returns the value of the protocol's own metric called name,
// and whether the protocol has one.
func (m *Metrics) Measure(name string) (float64, bool) {
	for _, x := range m.Own {
		if x.Name == name {
			return x.Value, true
		}
	}
	return 0, false
}

// FollowerProgress is the leader's view of one follower.
type FollowerProgress struct {
	ID wire.NodeID
	// Match is the highest log index known to be replicated on it.
	Match uint64
}
