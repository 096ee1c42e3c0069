package epaxos

import (
	"encoding/binary"
	"fmt"
	"slices"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// A snapshot replaces every record before it: the applied state, what the
// conflict index remembers of executed writes, how far each row is
// executed and forgotten, the numbers reserved, and every instance still
// held in memory (those executed here but not yet everywhere included,
// so this replica can still tell a recovering one what they were).

// snapshot builds the state as of the last record appended.
func (r *Replica) snapshot() (*raftpb.Snapshot, []byte) {
	var b []byte
	b = wire.AppendLenBytes(b, r.store.Snapshot())
	b = binary.AppendUvarint(b, r.reserved)
	b = binary.AppendUvarint(b, r.stats.executed)
	b = binary.AppendUvarint(b, r.stats.executedSet)
	// Each row's marks.
	b = binary.AppendUvarint(b, uint64(len(r.peers)))
	for _, p := range r.peers {
		above := slices.Sorted(func(yield func(uint64) bool) {
			for n := range r.gc.above[p] {
				if !yield(n) {
					return
				}
			}
		})
		b = appendUvarints(b, uint64(p), r.gc.mine[p], r.gc.dropped[p], uint64(len(above)))
		b = appendUvarints(b, above...)
	}
	// The conflict index's executed writes.
	b = wire.AppendInstances(b, []wire.Instance{r.conf.txns.lastWrite})
	var keys []*keyEntry
	r.conf.keys.Ascend(func(e *keyEntry) bool {
		if e.lastWrite.Replica != 0 {
			keys = append(keys, e)
		}
		return true
	})
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, e := range keys {
		b = wire.AppendLenBytes(b, []byte(e.key))
		b = wire.AppendInstances(b, []wire.Instance{e.lastWrite})
	}
	sessions := slices.Sorted(func(yield func(uint64) bool) {
		for s, e := range r.conf.sessions {
			if e.lastWrite.Replica != 0 && !yield(s) {
				return
			}
		}
	})
	b = binary.AppendUvarint(b, uint64(len(sessions)))
	for _, s := range sessions {
		b = binary.AppendUvarint(b, s)
		b = wire.AppendInstances(b, []wire.Instance{r.conf.sessions[s].lastWrite})
	}
	// The instances held.
	ids := make([]wire.Instance, 0, len(r.instances))
	for id := range r.instances {
		ids = append(ids, id)
	}
	sortInstances(ids)
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = wire.AppendLenBytes(b, encodeInstance(r.instances[id], false))
	}
	md := &raftpb.SnapshotMetadata{Index: new(r.records.next - 1), Term: new(uint64(1))}
	return &raftpb.Snapshot{Metadata: md}, b
}

// restore loads a snapshot's state into a replica that holds nothing yet.
func (r *Replica) restore(data []byte) error {
	rd := wire.NewReader(data)
	st, err := kvstore.RestoreUnordered(rd.Bytes())
	if err != nil {
		return err
	}
	r.store = st
	r.reserved = rd.Uvarint()
	r.stats.executed = rd.Uvarint()
	r.stats.executedSet = rd.Uvarint()
	rows := rd.Uvarint()
	for range rows {
		p := wire.NodeID(rd.Uvarint())
		r.gc.mine[p], r.gc.dropped[p] = rd.Uvarint(), rd.Uvarint()
		n := rd.Uvarint()
		for range n {
			if r.gc.above[p] == nil {
				r.gc.above[p] = make(map[uint64]struct{})
			}
			r.gc.above[p][rd.Uvarint()] = struct{}{}
		}
	}
	if last := rd.Instances(); len(last) == 1 {
		r.conf.txns.lastWrite = last[0]
	}
	for range rd.Uvarint() {
		key := string(rd.Bytes())
		if last := rd.Instances(); len(last) == 1 {
			r.conf.entryFor(key).lastWrite = last[0]
		}
	}
	for range rd.Uvarint() {
		s := rd.Uvarint()
		if last := rd.Instances(); len(last) == 1 {
			r.conf.sessionEntry(s).lastWrite = last[0]
		}
	}
	for range rd.Uvarint() {
		if err := r.replayInstance(rd.Bytes(), true); err != nil {
			return err
		}
	}
	if err := rd.Err(true); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// compactDue reports whether enough records went by to take a snapshot.
func (r *Replica) compactDue() bool { return r.records.sinceSnapshot >= r.opts.CompactEvery }
