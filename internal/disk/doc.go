// Package disk is a replica's durable storage: its raft hard state, log
// entries and snapshots in a data directory, through etcd's write-ahead log
// and snapshotter (CRC'd records, segment files, torn-tail repair, snapshot
// markers). It implements raftlog.Disk.
//
// Layout of a data directory:
//
//	LOCK         flock'ed by the server that owns the directory; holds its pid
//	wal/*.wal    write-ahead log segments: entries, hard state, snapshot markers
//	snap/*.snap  snapshots: raft metadata and the size and CRC of their state
//	snap/*.state the applied state of each snapshot (the newest two are kept)
//
// A torn record at the end of the log (a crash in the middle of a write) is
// repaired at start with a log line; a damaged record anywhere else stops
// the replica with an error naming the segment and the offset, since
// skipping it would silently drop entries the replica acknowledged.
package disk
