package raftlog

import (
	"fmt"
	"sync/atomic"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// A Write is what rounds of a replica asked its disk to keep: snapshots
// from the leader, log entries and hard state, and other logs that go with
// them (a CURP witness's records). The core makes it and goes on at once;
// its driver makes it durable (Do), on another goroutine if it likes, and
// only then delivers what waited for it (see protocol.Ready). Raft runs
// with asynchronous storage writes: the messages that depend on the write
// (a follower's acknowledgement, a vote, the leader's own acknowledgement
// of its entries) wait in the core's output for the write, while the
// leader's appends go to the followers at once, so the leader's disk
// writes in parallel with theirs (§10.2.1 of the Raft thesis). No entry is
// applied before the write that holds it is done.
type Write struct {
	disk  Disk
	parts []writePart
	// first are synced before the raft log's parts, also after them.
	first, also []Syncer
	// savedCommit is raised to the commit index of each hard state saved.
	savedCommit *atomic.Uint64
}

// writePart is a snapshot, or entries and a hard state, kept in order.
type writePart struct {
	snap *raftpb.Snapshot
	hs   *raftpb.HardState
	ents []*raftpb.Entry
}

// Syncer is another log whose appends are made durable by a Write.
type Syncer interface {
	// Sync makes everything appended so far durable. It may run on another
	// goroutine than the appends.
	Sync() error
}

// Also returns w, a new Write if w is nil, with s synced by it.
func (w *Write) Also(s Syncer) *Write {
	if w == nil {
		w = &Write{}
	}
	w.also = addSyncer(w.also, s)
	return w
}

// First returns w, a new Write if w is nil, with s synced by it before
// the raft log's parts: for appends that must be durable before the raft
// log drops what kept them until now.
func (w *Write) First(s Syncer) *Write {
	if w == nil {
		w = &Write{}
	}
	w.first = addSyncer(w.first, s)
	return w
}

func addSyncer(list []Syncer, s Syncer) []Syncer {
	for _, o := range list {
		if o == s {
			return list
		}
	}
	return append(list, s)
}

// add takes what a MsgStorageAppend asks to keep.
func (w *Write) add(m *raftpb.Message) {
	var part writePart
	if s := m.GetSnapshot(); s != nil && !raft.IsEmptySnap(s) {
		part.snap = s
	}
	if m.Term != nil { // the message carries a hard state
		part.hs = &raftpb.HardState{Term: new(m.GetTerm()), Vote: new(m.GetVote()), Commit: new(m.GetCommit())}
	}
	part.ents = m.GetEntries()
	w.push(part)
}

// push adds a part, folding it into the last one when neither holds a
// snapshot: a later hard state replaces an earlier one, and later entries
// replace those at the same indexes and after, as they do in the log.
func (w *Write) push(p writePart) {
	if p.snap == nil && p.hs == nil && len(p.ents) == 0 {
		return
	}
	n := len(w.parts)
	if n == 0 || p.snap != nil || w.parts[n-1].snap != nil {
		p.ents = append([]*raftpb.Entry(nil), p.ents...)
		w.parts = append(w.parts, p)
		return
	}
	last := &w.parts[n-1]
	if p.hs != nil {
		last.hs = p.hs
	}
	if len(p.ents) > 0 {
		first := p.ents[0].GetIndex()
		keep := len(last.ents)
		for keep > 0 && last.ents[keep-1].GetIndex() >= first {
			keep--
		}
		last.ents = append(last.ents[:keep], p.ents...)
	}
}

// Merge folds a later write of the same replica into w, so that both take
// one sync. w must not have been done yet.
func (w *Write) Merge(next protocol.Write) {
	later := next.(*Write)
	if w.disk == nil {
		w.disk = later.disk
	}
	if w.savedCommit == nil {
		w.savedCommit = later.savedCommit
	}
	for _, p := range later.parts {
		w.push(p)
	}
	for _, s := range later.first {
		w.First(s)
	}
	for _, s := range later.also {
		w.Also(s)
	}
}

// Do makes the write durable: the logs asked for first, the snapshots and
// the entries and hard state in order, then the other logs.
func (w *Write) Do() error {
	for _, s := range w.first {
		if err := s.Sync(); err != nil {
			return err
		}
	}
	for _, p := range w.parts {
		if p.snap != nil {
			if err := w.disk.SaveSnapshot(p.snap); err != nil {
				return fmt.Errorf("raftlog: save snapshot: %w", err)
			}
		}
		if p.hs != nil || len(p.ents) > 0 {
			if err := w.disk.Save(p.hs, p.ents); err != nil {
				return fmt.Errorf("raftlog: save: %w", err)
			}
			if p.hs != nil && w.savedCommit != nil {
				raise(w.savedCommit, p.hs.GetCommit())
			}
		}
	}
	for _, s := range w.also {
		if err := s.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// raise sets v to n if n is larger.
func raise(v *atomic.Uint64, n uint64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}
