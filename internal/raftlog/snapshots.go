package raftlog

import (
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// snapshotLostAfter is how many election timeouts a follower may wait for
// a snapshot before the leader takes it as lost and sends another: a
// snapshot of a large state on a slow link takes a while, and one given up
// too early is only sent again.
const snapshotLostAfter = 5

// Raft leaves it to its user to say when a snapshot sent to a follower is
// done with (RawNode.ReportSnapshot); until then it sends that follower
// nothing more. Unreported, two cases stalled a follower for good:
//   - it applied the snapshot, but the leader had meanwhile compacted its
//     log past the snapshot's index, so raft could not continue from the
//     log and kept waiting (seen at 3 x 128 sessions with 15 in flight: a
//     follower stuck 900,000 entries behind);
//   - the snapshot was lost with its connection.
//
// The leader reports the first as finished once the follower's answer
// shows the snapshot applied, and the second as failed after
// snapshotLostAfter election timeouts; either way raft probes the follower
// again and sends a newer snapshot if it still needs one.

// snapshotAnswered reports a snapshot as finished once the follower from
// whom an append answer came has applied it.
func (l *Log) snapshotAnswered(m *raftpb.Message) {
	if m.GetType() != raftpb.MessageType_MsgAppResp || !l.IsLeader() {
		return
	}
	from, applied := m.GetFrom(), false
	l.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if id == from && pr.State == tracker.StateSnapshot && pr.Match >= pr.PendingSnapshot {
			applied = true
		}
	})
	if applied {
		delete(l.snapshotWaits, from)
		l.rn.ReportSnapshot(from, raft.SnapshotFinish)
	}
}

// tickSnapshots counts, on the leader, how long each follower has waited
// for its snapshot, and reports one that waited too long as lost.
func (l *Log) tickSnapshots() {
	var lost []uint64
	l.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if pr.State != tracker.StateSnapshot {
			delete(l.snapshotWaits, id)
			return
		}
		l.snapshotWaits[id]++
		if l.snapshotWaits[id] >= snapshotLostAfter*l.cfg.ElectionTicks {
			lost = append(lost, id)
		}
	})
	for _, id := range lost {
		delete(l.snapshotWaits, id)
		l.rn.ReportSnapshot(id, raft.SnapshotFailure)
	}
}
