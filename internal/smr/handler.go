package smr

import (
	"fmt"
	"io"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// take does what a round of the raft log asks, in the order it asks it.
func (r *Replica) take(rd raftlog.Round) {
	for _, e := range rd.Events {
		switch e.Kind {
		case raftlog.Restore:
			r.restore(e.Index, e.Data)
		case raftlog.Append:
			r.appended(e.Index, e.Data)
		case raftlog.Apply:
			r.apply(e.Index, e.Data)
		case raftlog.Send:
			r.out = append(r.out, wire.Envelope{To: wire.NodeID(e.Msg.GetTo()), Msg: &wire.Raft{M: e.Msg}})
		case raftlog.SendAfterWrite:
			r.after = append(r.after, wire.Envelope{To: wire.NodeID(e.Msg.GetTo()), Msg: &wire.Raft{M: e.Msg}})
		}
	}
}

func (r *Replica) appended(index uint64, data []byte) {
	if index <= r.tail {
		r.proto.Replaced(index)
	}
	r.tail = index
	if len(data) == 0 {
		return
	}
	req, ok := r.entries.append(r.id, index, data).(*wire.Request)
	if !ok {
		return // a clock entry
	}
	if r.log.IsLeader() {
		r.logged[req.Op.ID] = index
	}
	r.proto.Appended(index, req)
}

// apply executes an entry in slot order and, on the leader, answers the
// client that proposed it.
func (r *Replica) apply(index uint64, data []byte) {
	var req *wire.Request
	switch m := r.entries.apply(r.id, index, data).(type) {
	case *wire.Request:
		req = m
	case *wire.Clock:
		r.applyClock(index, m)
		return
	}
	op := &req.Op
	res, _ := r.store.Apply(index, op, req.AckedBelow)
	delete(r.proposed, op.ID)
	delete(r.logged, op.ID)
	var reply *wire.Reply
	to, ok := r.clients[op.ID]
	if ok {
		delete(r.clients, op.ID)
		if r.log.IsLeader() {
			reply = &wire.Reply{Kind: wire.ReplySync, ID: op.ID, Ok: true,
				Found: res.Found, Value: res.Value, Slot: res.Slot, Applied: index}
		}
	}
	r.proto.Applied(index, req, res, reply)
	if reply != nil {
		// The result of a committed entry, which this replica applies
		// only once its own disk holds it: it rests on nothing a later
		// write must keep, so it need not wait for one.
		r.stamp(reply)
		r.out = append(r.out, wire.Envelope{To: to, Msg: reply})
	}
	r.maybeCompact()
}

func (r *Replica) restore(index uint64, data []byte) {
	st, err := kvstore.Restore(data)
	if err != nil {
		panic(fmt.Sprintf("replica %d: snapshot %d: %v", r.id, index, err))
	}
	r.store = st
	r.tail = index
	r.entries.restore(index)
	if !broken.snapshotKeepsTicks {
		r.followClock() // the snapshot's clock replaced the log's
	}
	r.proto.Restored()
}

// trimEvery is at most how many applied entries pass between two trims of
// the log held in memory.
const trimEvery = 4096

// maybeCompact snapshots the applied state and drops the log before it
// once the log has grown past the larger of CompactEvery entries and the
// state's own size: a snapshot costs time in proportion to the state, so
// the amortized cost per entry stays constant while the log on disk stays
// within a multiple of the state. Snapshotting twice as often (at half as
// many entries as keys) halved the memory the log held between two
// snapshots, but with a million keys it also doubled the snapshots'
// writes, 107 MB per replica each, and on a disk shared by three replicas
// their log syncs slowed from 1.4–2.1 to 4.8–5.2 ms and throughput fell
// by a quarter. Memory is bounded apart, by trimming the applied entries
// raft's storage holds to MemoryKeep (raftlog's Trim); a follower that
// needs a trimmed entry makes the leader snapshot at once.
func (r *Replica) maybeCompact() {
	r.sinceCompact++
	if r.sinceCompact%min(trimEvery, r.opts.MemoryKeep/16+1) == 0 {
		if err := r.log.Trim(r.opts.MemoryKeep); err != nil {
			r.opts.Logger.Warn("trim", "err", err)
		}
	}
	r.compactIfDue()
}

// compactIfDue compacts if the log has grown enough or a follower needs a
// snapshot. A compaction the log puts off until the disk's hard state
// commits the applied index (raftlog's CanCompact) is tried again at the
// next entry applied and every round (see Ready).
func (r *Replica) compactIfDue() {
	if r.sinceCompact < max(r.opts.CompactEvery, uint64(r.store.Len())) && !r.log.SnapshotWanted() {
		return
	}
	r.compact()
}

// compact snapshots the applied state. The state is frozen and streamed
// to the disk in the background (kvstore.Frozen); the store folds in what
// it applied meanwhile once a round (Ready).
func (r *Replica) compact() {
	if r.store.Frozen() {
		return // the last snapshot is still being encoded; try again next entry
	}
	if !r.log.CanCompact(r.store.Applied()) {
		return
	}
	r.sinceCompact = 0
	r.proto.Compacting()
	store := r.store
	freeze := func() io.WriterTo { return store.Freeze() }
	if err := r.log.Compact(r.store.Applied(), r.opts.CompactKeep, freeze); err != nil {
		r.opts.Logger.Warn("compact", "err", err)
	}
}
