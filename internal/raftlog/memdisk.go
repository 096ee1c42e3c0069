package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// MemDisk is a Disk in memory, for the simulator and tests. It models what a
// real disk keeps across a power cut: writes are volatile until synced, and
// Crash drops whatever was not synced. With Fsync set, as on a replica's real
// disk by default, Save and SaveSnapshot sync before they return, so a crash
// loses nothing a replica acted on; without it every write stays volatile,
// which is what running with --fsync=false risks.
//
// A restarted replica gets the same MemDisk and loads from it exactly as the
// binary loads from its data directory.
type MemDisk struct {
	Fsync bool

	mu      sync.Mutex
	synced  memState
	pending memState // synced plus the writes not synced yet
	syncs   uint64
	snaps   uint64
	// compacted is the last compaction saved, until Compacted takes it.
	compacted *raftpb.Snapshot
	// committed keeps every entry this disk held synced while its synced
	// hard state said it was committed, compaction notwithstanding, so a
	// test can replay the whole log (see Committed).
	committed map[uint64]*raftpb.Entry
}

type memState struct {
	snap *raftpb.Snapshot
	hs   *raftpb.HardState
	ents []*raftpb.Entry
}

// NewMemDisk returns a blank disk that syncs every write.
func NewMemDisk() *MemDisk { return &MemDisk{Fsync: true} }

var _ Disk = (*MemDisk)(nil)

// Load implements Disk.
func (d *MemDisk) Load() (State, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := State{}
	if d.synced.snap != nil {
		s.Snapshot = &raftpb.Snapshot{Metadata: clone(d.synced.snap.GetMetadata())}
	}
	if d.synced.hs != nil {
		s.HardState = clone(d.synced.hs)
	}
	for _, e := range d.synced.ents {
		s.Entries = append(s.Entries, clone(e))
	}
	d.pending = d.synced.copy()
	return s, nil
}

// Save implements Disk.
func (d *MemDisk) Save(hs *raftpb.HardState, ents []*raftpb.Entry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(ents) > 0 {
		first := ents[0].GetIndex()
		kept := d.pending.ents
		for len(kept) > 0 && kept[len(kept)-1].GetIndex() >= first {
			kept = kept[:len(kept)-1]
		}
		if len(kept) > 0 && kept[len(kept)-1].GetIndex()+1 != first {
			return errors.New("raftlog: memdisk: entries leave a gap in the log")
		}
		d.pending.ents = kept
		for _, e := range ents {
			d.pending.ents = append(d.pending.ents, clone(e))
		}
	}
	if hs != nil && (hs.GetTerm() != 0 || hs.GetVote() != 0 || hs.GetCommit() != 0) {
		d.pending.hs = clone(hs)
	}
	d.maybeSync()
	return nil
}

// SaveCompaction implements Disk: like SaveSnapshot, at once, so that a
// simulated run stays deterministic.
func (d *MemDisk) SaveCompaction(snap *raftpb.Snapshot, state io.WriterTo) error {
	var b bytes.Buffer
	if _, err := state.WriteTo(&b); err != nil {
		return err
	}
	snap.Data = b.Bytes()
	if err := d.SaveSnapshot(snap); err != nil {
		return err
	}
	d.mu.Lock()
	d.compacted = &raftpb.Snapshot{Metadata: clone(snap.GetMetadata())}
	d.mu.Unlock()
	return nil
}

// SnapshotData implements Disk.
func (d *MemDisk) SnapshotData(md *raftpb.SnapshotMetadata) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range []*raftpb.Snapshot{d.pending.snap, d.synced.snap} {
		if s != nil && s.GetMetadata().GetIndex() == md.GetIndex() && s.GetMetadata().GetTerm() == md.GetTerm() {
			return s.GetData(), nil
		}
	}
	if md.GetIndex() <= FirstEntry-1 {
		return nil, nil
	}
	return nil, fmt.Errorf("raftlog: memdisk: no snapshot at index %d", md.GetIndex())
}

// Compacted implements Disk.
func (d *MemDisk) Compacted() *raftpb.Snapshot {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.compacted
	d.compacted = nil
	return s
}

// SaveSnapshot implements Disk.
func (d *MemDisk) SaveSnapshot(snap *raftpb.Snapshot) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	idx := snap.GetMetadata().GetIndex()
	d.pending.snap = clone(snap)
	var kept []*raftpb.Entry
	for _, e := range d.pending.ents {
		if e.GetIndex() > idx {
			kept = append(kept, e)
		}
	}
	d.pending.ents = kept
	d.snaps++
	d.maybeSync()
	return nil
}

func (d *MemDisk) maybeSync() {
	if d.Fsync {
		d.synced = d.pending.copy()
		d.syncs++
		d.noteCommitted()
	}
}

// noteCommitted adds the synced entries the synced commit index covers to
// committed; those of the end of the log first, since older ones are
// usually noted already.
func (d *MemDisk) noteCommitted() {
	commit := d.synced.hs.GetCommit()
	if d.committed == nil {
		d.committed = make(map[uint64]*raftpb.Entry)
	}
	for i := len(d.synced.ents) - 1; i >= 0; i-- {
		e := d.synced.ents[i]
		if e.GetIndex() > commit {
			continue
		}
		if _, ok := d.committed[e.GetIndex()]; ok {
			break
		}
		d.committed[e.GetIndex()] = e
	}
}

// Committed calls fn with each entry this disk held as committed, in no
// particular order: the log a replica applied, kept for tests that replay
// it. Entries that reached the replica inside a snapshot are not in it.
func (d *MemDisk) Committed(fn func(*raftpb.Entry)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.committed {
		fn(e)
	}
}

// Crash drops every write not yet synced, as a power cut would.
func (d *MemDisk) Crash() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending = d.synced.copy()
}

// Stats implements Disk.
func (d *MemDisk) Stats() DiskStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	var wal, snap int64
	for _, e := range d.synced.ents {
		wal += int64(len(e.GetData()))
	}
	if d.synced.snap != nil {
		snap = int64(len(d.synced.snap.GetData()))
	}
	return DiskStats{Fsync: d.Fsync, Syncs: d.syncs, Snapshots: d.snaps, WALBytes: wal, SnapBytes: snap}
}

// Close implements Disk.
func (d *MemDisk) Close() error { return nil }

// copy shares the immutable messages but not the slice.
func (s memState) copy() memState {
	s.ents = append([]*raftpb.Entry(nil), s.ents...)
	return s
}

func clone[M proto.Message](m M) M { return proto.Clone(m).(M) }
