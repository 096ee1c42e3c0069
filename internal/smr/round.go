package smr

import (
	"fmt"
	"io"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Event is one thing a round of the replicated state machine did that the
// protocol owning it may follow up. The protocol walks a round with Begin
// and Next and handles each event before asking for the next: the state
// machine goes on only when asked, so the protocol sees the state as it is
// right after the event (an entry applied, and none after it).
type Event struct {
	Kind  EventKind
	Index uint64
	// Req is the operation appended or applied.
	Req *wire.Request
	// Result is an applied operation's result.
	Result kvstore.Result
	// Reply is the reply the leader sends for an applied operation, nil if
	// it sends none; the protocol may adjust it before its next Next.
	Reply *wire.Reply
	// Leading says, for LeaderChanged, whether this replica now leads.
	Leading bool
}

// EventKind names an Event.
type EventKind uint8

const (
	// Done: the round has nothing more; Output hands over what it produced.
	Done EventKind = iota
	// Appended: an operation was added to this replica's log at Index.
	Appended
	// Replaced: a later leader's entry is about to replace the log's
	// entries from Index on (its Appended follows).
	Replaced
	// Applied: an operation was applied at Index.
	Applied
	// Restored: the state, and the log with it, was replaced by a snapshot.
	Restored
	// LeaderChanged: this replica started or stopped leading.
	LeaderChanged
	// Settled: the round's entries are appended and applied; once-a-round
	// work that waits on the log's progress belongs here.
	Settled
	// Compacting: the applied state is about to be snapshotted to bound
	// the log. A restart then starts from the snapshot and no longer
	// replays the entries it covers, so what the protocol keeps on disk
	// and drops only as those entries apply must be dropped from the disk
	// now; the snapshot is taken at the next Next.
	Compacting
)

// unfinished is what the last event left for Next to finish first.
type unfinished uint8

const (
	finished    unfinished = iota
	appendEntry            // the entry whose Replaced was handed out
	afterApply             // an entry's reply, if any, then a compaction check
	compactNow             // the compaction whose Compacting was handed out
)

// roundPhase is how far Next got through a round.
type roundPhase uint8

const (
	walkingLog roundPhase = iota
	checkingLeader
	settling
	compacting
	roundDone
)

// Begin starts a round: the raft log hands over what it did since the
// last one, for Next to walk.
func (r *Replica) Begin() {
	r.store.Thaw()
	round, err := r.log.Ready()
	if err != nil {
		// Raft's storage in memory refused what raft handed it: the core's
		// state can no longer be trusted.
		panic(fmt.Sprintf("replica %d: raft ready: %v", r.id, err))
	}
	r.round, r.cursor, r.phase = round, 0, walkingLog
}

// Next does what the round asks next, up to the next event for the
// protocol, and returns it; Done once the round is over.
func (r *Replica) Next() Event {
	for {
		if ev, ok := r.finish(); ok {
			return ev
		}
		switch r.phase {
		case walkingLog:
			if r.cursor == len(r.round.Events) {
				r.phase = checkingLeader
				continue
			}
			e := r.round.Events[r.cursor]
			r.cursor++
			if ev, ok := r.take(e); ok {
				return ev
			}
		case checkingLeader:
			r.phase = settling
			if ev, ok := r.leadership(); ok {
				return ev
			}
		case settling:
			r.phase = compacting
			return Event{Kind: Settled}
		case compacting:
			r.phase = roundDone
			if r.compactionDue() {
				r.unfinished = compactNow
				return Event{Kind: Compacting}
			}
		case roundDone:
			return Event{}
		}
	}
}

// Output returns what the round produced, once Next said Done.
func (r *Replica) Output() protocol.Ready {
	rd := protocol.Ready{Messages: r.out, After: r.after}
	if r.round.Write != nil { // a nil *raftlog.Write is not a nil protocol.Write
		rd.Write = r.round.Write
	}
	r.after = nil // the driver's now
	r.round = raftlog.Round{}
	return rd
}

// finish completes what the last event left, and reports an event if
// that completion has one.
func (r *Replica) finish() (Event, bool) {
	u := r.unfinished
	r.unfinished = finished
	switch u {
	case appendEntry:
		return r.appendEntry(r.replacing.Index, r.replacing.Data)
	case afterApply:
		if rep := r.reply; rep != nil {
			// The result of a committed entry, which this replica applies
			// only once its own disk holds it: it rests on nothing a later
			// write must keep, so it need not wait for one.
			r.stamp(rep)
			r.out = append(r.out, wire.Envelope{To: r.replyTo, Msg: rep})
			r.reply = nil
		}
		r.sinceCompact++
		r.maybeTrim()
		if r.compactionDue() {
			r.unfinished = compactNow
			return Event{Kind: Compacting}, true
		}
	case compactNow:
		r.compact()
	}
	return Event{}, false
}

// take does one thing the raft log's round asks, in the order it asks it.
func (r *Replica) take(e raftlog.Event) (Event, bool) {
	switch e.Kind {
	case raftlog.Restore:
		r.restore(e.Index, e.Data)
		return Event{Kind: Restored, Index: e.Index}, true
	case raftlog.Append:
		if e.Index <= r.tail {
			r.replacing, r.unfinished = e, appendEntry
			return Event{Kind: Replaced, Index: e.Index}, true
		}
		return r.appendEntry(e.Index, e.Data)
	case raftlog.Apply:
		return r.apply(e.Index, e.Data)
	case raftlog.Send:
		r.out = append(r.out, wire.Envelope{To: wire.NodeID(e.Msg.GetTo()), Msg: &wire.Raft{M: e.Msg}})
	case raftlog.SendAfterWrite:
		r.after = append(r.after, wire.Envelope{To: wire.NodeID(e.Msg.GetTo()), Msg: &wire.Raft{M: e.Msg}})
	}
	return Event{}, false
}

func (r *Replica) appendEntry(index uint64, data []byte) (Event, bool) {
	r.tail = index
	if len(data) == 0 {
		return Event{}, false
	}
	req, ok := r.entries.append(r.id, index, data).(*wire.Request)
	if !ok {
		return Event{}, false // a clock entry
	}
	if r.log.IsLeader() {
		r.logged[req.Op.ID] = index
		r.ackOnLog(index, req)
	}
	return Event{Kind: Appended, Index: index, Req: req}, true
}

// ackOnLog answers a weak write flagged wire.FlagAckOnLog as soon as this
// leader's log holds it: the reply leaves once the round's write is
// durable here, before any other replica has the entry. The client is
// then forgotten, so that the entry's application sends nothing more (a
// re-send of the write, its answer lost, is answered when it applies).
func (r *Replica) ackOnLog(index uint64, req *wire.Request) {
	if req.Flags&wire.FlagAckOnLog == 0 || req.Op.Level != wire.Weak || !req.Op.Kind.IsWrite() {
		return
	}
	to, ok := r.clients[req.Op.ID]
	if !ok {
		return
	}
	delete(r.clients, req.Op.ID)
	r.ReplyAfterWrite(to, &wire.Reply{Kind: wire.ReplyWeak, ID: req.Op.ID, Ok: true, Slot: index})
}

// apply executes an entry in slot order and, on the leader, prepares the
// reply to the client that proposed it (sent once the protocol saw it).
func (r *Replica) apply(index uint64, data []byte) (Event, bool) {
	var req *wire.Request
	switch m := r.entries.apply(r.id, index, data).(type) {
	case *wire.Request:
		req = m
	case *wire.Clock:
		r.applyClock(index, m)
		r.reply, r.unfinished = nil, afterApply
		return Event{}, false
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
				Found: res.Found, Value: res.Value, Revision: res.Revision, Slot: res.Slot, Applied: index}
		}
	}
	r.reply, r.replyTo, r.unfinished = reply, to, afterApply
	return Event{Kind: Applied, Index: index, Req: req, Result: res, Reply: reply}, true
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
}

// leadership notes a change of leadership since the last round.
func (r *Replica) leadership() (Event, bool) {
	leading := r.log.IsLeader()
	if leading == r.wasLeader {
		return Event{}, false
	}
	r.wasLeader = leading
	clear(r.logged)
	if !leading {
		r.batch = r.batch[:0]
		r.entries.dropProposals()
		clear(r.proposed)
	} else {
		r.noteLogged()
		r.clockOnLeading()
	}
	return Event{Kind: LeaderChanged, Leading: leading}, true
}

// trimEvery is at most how many applied entries pass between two trims of
// the log held in memory.
const trimEvery = 4096

// maybeTrim trims the applied entries raft's storage holds in memory to
// MemoryKeep, every so many entries applied.
func (r *Replica) maybeTrim() {
	if r.sinceCompact%min(trimEvery, r.opts.MemoryKeep/16+1) == 0 {
		if err := r.log.Trim(r.opts.MemoryKeep); err != nil {
			r.opts.Logger.Warn("trim", "err", err)
		}
	}
}

// compactionDue reports whether the applied state should be snapshotted
// now: once the log has grown past the larger of CompactEvery entries and
// the state's own size, so that the amortized cost per entry stays
// constant while the log on disk stays within a multiple of the state, or
// when a follower needs a snapshot. Snapshotting twice as often (at half
// as many entries as keys) halved the memory the log held between two
// snapshots, but with a million keys it also doubled the snapshots'
// writes, 107 MB per replica each, and on a disk shared by three replicas
// their log syncs slowed from 1.4–2.1 to 4.8–5.2 ms and throughput fell
// by a quarter. Memory is bounded apart, by trimming the applied entries
// raft's storage holds to MemoryKeep (raftlog's Trim); a follower that
// needs a trimmed entry makes the leader snapshot at once. A compaction
// the log puts off until the disk's hard state commits the applied index
// (raftlog's CanCompact), or while the last snapshot is still being
// encoded, is tried again at the next entry applied and every round.
func (r *Replica) compactionDue() bool {
	if r.sinceCompact < max(r.opts.CompactEvery, uint64(r.store.Len())) && !r.log.SnapshotWanted() {
		return false
	}
	return !r.store.Frozen() && r.log.CanCompact(r.store.Applied())
}

// compact snapshots the applied state. The state is frozen and streamed
// to the disk in the background (kvstore.Frozen); the store folds in what
// it applied meanwhile once a round (Begin).
func (r *Replica) compact() {
	r.sinceCompact = 0
	store := r.store
	freeze := func() io.WriterTo { return store.Freeze() }
	if err := r.log.Compact(r.store.Applied(), r.opts.CompactKeep, freeze); err != nil {
		r.opts.Logger.Warn("compact", "err", err)
	}
}
