package rafthtclient

// Policy is what one protocol of the family does with weak operations.
type Policy struct {
	// Cache answers weak reads with the fresher of the replica's answer
	// and the session's cache (Raft-HT).
	Cache bool
	// Floors stamps each weak read with its session's floor, which the
	// replica waits for.
	Floors bool
	// Redirect asks the replica to refuse a read whose floor it does not
	// reach yet rather than wait; the read then goes to the leader.
	Redirect bool
	// StrongWrites sends every write as a strong operation.
	StrongWrites bool
	// AckOnLog has the leader answer weak writes once its own log holds
	// them, before replication (wire.FlagAckOnLog): a run's option, not a
	// protocol's.
	AckOnLog bool
}

// The protocols of the family.
var (
	RaftHT   = Policy{Cache: true}
	Mongo    = Policy{Floors: true}
	Pileus   = Policy{Floors: true, Redirect: true, StrongWrites: true}
	PileusHT = Policy{Floors: true, Redirect: true}
)
