package smr

import (
	"fmt"
	"io"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// handler receives the raft log's Ready round on the replica's behalf; it
// keeps these methods off the replica's exported surface.
type handler struct{ r *Replica }

func (h handler) Appended(index uint64, data []byte) {
	if index <= h.r.tail {
		h.r.proto.Replaced(index)
	}
	h.r.tail = index
	if len(data) == 0 {
		return
	}
	req, ok := h.r.decode(index, data).(*wire.Request)
	if !ok {
		return // a clock entry
	}
	if h.r.log.IsLeader() {
		h.r.logged[req.Op.ID] = index
	}
	h.r.proto.Appended(index, req)
}

func (h handler) Send(m *raftpb.Message) {
	h.r.out = append(h.r.out, wire.Envelope{To: wire.NodeID(m.GetTo()), Msg: &wire.Raft{M: m}})
}

func (h handler) SendAfterWrite(m *raftpb.Message) {
	h.r.after = append(h.r.after, wire.Envelope{To: wire.NodeID(m.GetTo()), Msg: &wire.Raft{M: m}})
}

// Apply executes an entry in slot order and, on the leader, answers the
// client that proposed it.
func (h handler) Apply(index uint64, data []byte) {
	r := h.r
	var req *wire.Request
	switch m := r.decode(index, data).(type) {
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

func (h handler) Restore(index uint64, data []byte) {
	st, err := kvstore.Restore(data)
	if err != nil {
		panic(fmt.Sprintf("replica %d: snapshot %d: %v", h.r.id, index, err))
	}
	h.r.store = st
	h.r.tail = index
	if !broken.snapshotKeepsTicks {
		h.r.followClock() // the snapshot's clock replaced the log's
	}
	h.r.proto.Restored()
}

// decode decodes a log entry: a request or a clock entry.
func (r *Replica) decode(index uint64, data []byte) wire.Message {
	m, err := wire.Decode(data)
	if err == nil {
		switch m.(type) {
		case *wire.Request, *wire.Clock:
			return m
		}
		err = fmt.Errorf("holds a %v", m.Type())
	}
	// Entries are written by this program's leaders only.
	panic(fmt.Sprintf("replica %d: log entry %d: %v", r.id, index, err))
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
	r.sinceCompact = 0
	r.proto.Compacting()
	store := r.store
	freeze := func() io.WriterTo { return store.Freeze() }
	if err := r.log.Compact(r.opts.CompactKeep, freeze); err != nil {
		r.opts.Logger.Warn("compact", "err", err)
	}
}
