package raftlog

import (
	"errors"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// A snapshot of the applied state is as large as the whole store, so the
// replica writes one only after as many entries as the store has keys (see
// smr's maybeCompact). Raft's storage held every entry in between, in
// memory: with a million keys, up to a million entries, a few hundred MB
// that came and went with each snapshot and swung a replica's RSS by half.
// So the entries a replica has applied are dropped from memory once more
// than keep of them are held (Trim); the disk keeps them until the next
// snapshot, for a restart to replay. A follower that needs a dropped entry
// gets a snapshot instead, taken for it on demand when the newest one is
// older than what memory holds. (etcd also keeps a fixed number of entries
// in memory for lagging followers, but its snapshots are frequent and
// cheap, so it trims only at them; ours are rare and as large as the
// state.)

// storage is raft's MemoryStorage, with Snapshot refusing, and asking for
// a new snapshot, when the newest one no longer joins the entries held.
type storage struct {
	*raft.MemoryStorage
	// wanted is set when raft asked for a snapshot that would not join.
	wanted bool
}

// Snapshot implements raft.Storage.
func (s *storage) Snapshot() (*raftpb.Snapshot, error) {
	snap, err := s.MemoryStorage.Snapshot()
	if err != nil {
		return nil, err
	}
	first, err := s.FirstIndex()
	if err != nil {
		return nil, err
	}
	if snap.GetMetadata().GetIndex()+1 < first {
		s.wanted = true
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	return snap, nil
}

// SnapshotWanted reports whether the leader must send a follower a
// snapshot and has none that joins the entries it holds: the replica
// should compact now rather than when its log has grown enough.
func (l *Log) SnapshotWanted() bool { return l.storage.wanted }

// Trim drops from memory the applied entries but the last keep. It keeps
// those after a snapshot being written, which must find its index in the
// log when it is installed.
func (l *Log) Trim(keep uint64) error {
	if l.applied <= keep {
		return nil
	}
	upTo := l.applied - keep
	if l.compacting != 0 {
		upTo = min(upTo, l.compacting)
	}
	err := l.storage.Compact(upTo)
	if errors.Is(err, raft.ErrCompacted) {
		return nil
	}
	return err
}
