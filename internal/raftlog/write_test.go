package raftlog

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3/raftpb"
)

func appendMsg(term uint64, first, last uint64, commit uint64) *raftpb.Message {
	m := &raftpb.Message{Term: new(term), Vote: new(uint64(1)), Commit: new(commit)}
	for i := first; i <= last; i++ {
		m.Entries = append(m.Entries, &raftpb.Entry{Index: new(i), Term: new(term), Data: []byte{byte(i)}})
	}
	return m
}

// Merged writes keep the log a sequence of rounds would have left: later
// entries replace those at their indexes and after, the last hard state
// wins, and one Save does it.
func TestMergedWritesLeaveTheLogTheRoundsWould(t *testing.T) {
	disk := &watchedDisk{MemDisk: NewMemDisk()}
	w := &Write{disk: disk}
	w.add(appendMsg(2, 2, 6, 1))
	later := &Write{disk: disk}
	later.add(appendMsg(3, 4, 5, 3)) // a new leader overwrote 4..6
	w.Merge(later)
	require.NoError(t, w.Do())

	st, err := disk.Load()
	require.NoError(t, err)
	var got [][2]uint64
	for _, e := range st.Entries {
		got = append(got, [2]uint64{e.GetIndex(), e.GetTerm()})
	}
	require.Equal(t, [][2]uint64{{2, 2}, {3, 2}, {4, 3}, {5, 3}}, got)
	require.Equal(t, uint64(3), st.HardState.GetTerm())
	require.Equal(t, uint64(3), st.HardState.GetCommit())
	require.Equal(t, uint64(1), disk.syncs, "merged writes took more than one sync")
}

// A snapshot from the leader is saved before the entries that follow it.
func TestWriteSavesASnapshotBeforeItsEntries(t *testing.T) {
	disk := &watchedDisk{MemDisk: NewMemDisk()}
	w := &Write{disk: disk}
	w.add(appendMsg(2, 2, 3, 3))
	snap := &raftpb.Snapshot{Data: []byte("state"), Metadata: &raftpb.SnapshotMetadata{
		Index: new(uint64(10)), Term: new(uint64(2)), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}}
	later := &Write{disk: disk}
	m := appendMsg(2, 11, 12, 12)
	m.Snapshot = snap
	later.add(m)
	w.Merge(later)
	require.NoError(t, w.Do())

	st, err := disk.Load()
	require.NoError(t, err)
	require.Equal(t, uint64(10), st.Snapshot.GetMetadata().GetIndex())
	require.Len(t, st.Entries, 2)
	require.Equal(t, uint64(11), st.Entries[0].GetIndex())
}

// orderedDisk and orderedSyncer note the order a Write does its parts in.
type orderedDisk struct {
	*MemDisk
	order *[]string
}

func (d orderedDisk) Save(hs *raftpb.HardState, ents []*raftpb.Entry) error {
	*d.order = append(*d.order, "raft log")
	return d.MemDisk.Save(hs, ents)
}

type orderedSyncer struct {
	name  string
	order *[]string
}

func (s orderedSyncer) Sync() error {
	*s.order = append(*s.order, s.name)
	return nil
}

// What a write must keep before its raft log part drops the entries that
// kept it is synced first, also when a later round's write asked for it
// and was merged into an earlier one.
func TestFirstSyncsBeforeTheRaftLog(t *testing.T) {
	var order []string
	disk := orderedDisk{MemDisk: NewMemDisk(), order: &order}
	w := &Write{disk: disk}
	w.add(appendMsg(2, 2, 3, 3))
	w = w.Also(orderedSyncer{"after", &order})
	later := (&Write{disk: disk}).First(orderedSyncer{"first", &order})
	later.add(appendMsg(3, 3, 3, 3))
	w.Merge(later)
	require.NoError(t, w.Do())
	require.Equal(t, []string{"first", "raft log", "after"}, order)
}
