package raftlog

import (
	"io"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Disk is where a replica's raft state survives a crash: the hard state
// (term, vote, commit), the log entries and the newest snapshot of the
// applied state. Raft's rule is that a replica's answers are on stable
// storage before they are sent: a Write calls Save and SaveSnapshot, and
// what waited for it goes out once they return.
//
// Writes (Save, SaveSnapshot) come from one goroutine, the replica's
// writer, in order; the other methods from the replica's core. The two may
// run at once. Stats is safe for concurrent use.
type Disk interface {
	// Load returns what the disk holds. It is called once, before any
	// write.
	Load() (State, error)
	// Save appends entries (an entry at an index the disk already holds
	// replaces it and everything after it) and records the hard state, then
	// syncs once: one sync per Ready, however many entries. Either argument
	// may be empty; with both empty nothing is written.
	Save(hs *raftpb.HardState, ents []*raftpb.Entry) error
	// SaveSnapshot makes snap durable and marks it in the log, so a restart
	// loads it and replays only the entries after it. What the snapshot
	// covers may then be discarded.
	SaveSnapshot(snap *raftpb.Snapshot) error
	// SaveCompaction records a snapshot the replica took of its own applied
	// state to bound its log; state streams its data. Unlike a snapshot
	// received from the leader, nothing waits on it: a disk may write it in
	// the background (state may be written from another goroutine), and until it is
	// durable the disk keeps the entries it covers, so a restart loads an
	// older snapshot and replays more. A failure to write it shows in the
	// next call.
	SaveCompaction(snap *raftpb.Snapshot, state io.WriterTo) error
	// Compacted returns, once, the newest snapshot SaveCompaction has
	// written (its metadata; the data stays on the disk) since the last
	// call; nil when there is none.
	Compacted() *raftpb.Snapshot
	// SnapshotData reads back the data of the snapshot at md, which must be
	// the one Load returned or one saved since: a replica keeps the
	// metadata of its snapshot in memory and the state, as large as the
	// whole store, on the disk only.
	SnapshotData(md *raftpb.SnapshotMetadata) ([]byte, error)
	// Stats reports the disk's activity.
	Stats() DiskStats
	// Close releases the disk.
	Close() error
}

// State is what a disk held when its replica started.
type State struct {
	// Snapshot is the newest valid snapshot, its data left out (see
	// Disk.SnapshotData); nil when there is none.
	Snapshot  *raftpb.Snapshot
	HardState *raftpb.HardState
	// Entries follow the snapshot, in index order.
	Entries []*raftpb.Entry
}

// Blank reports whether the disk held nothing: a replica that never ran,
// or one that lost its disk.
func (s State) Blank() bool {
	return (s.Snapshot == nil || raft.IsEmptySnap(s.Snapshot)) &&
		(s.HardState == nil || raft.IsEmptyHardState(s.HardState)) &&
		len(s.Entries) == 0
}

// DiskStats describes a disk's activity since it was opened.
type DiskStats struct {
	// Fsync says whether writes are synced (false: --fsync=false, for pure
	// protocol benchmarks; a power cut then loses acknowledged writes).
	Fsync bool `json:"fsync"`
	// Syncs counts syncs of the log; SyncP50, SyncP99 and SyncMax are
	// their latencies.
	Syncs   uint64        `json:"syncs"`
	SyncP50 time.Duration `json:"sync_p50_ns"`
	SyncP99 time.Duration `json:"sync_p99_ns"`
	SyncMax time.Duration `json:"sync_max_ns"`
	// Snapshots counts snapshots saved.
	Snapshots uint64 `json:"snapshots"`
	// WALBytes and SnapBytes are the bytes on disk now.
	WALBytes  int64 `json:"wal_bytes"`
	SnapBytes int64 `json:"snap_bytes"`
}
