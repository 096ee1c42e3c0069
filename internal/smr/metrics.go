package smr

import (
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Metrics implements protocol.Replica.
func (r *Replica) Metrics() protocol.Metrics {
	m := protocol.Metrics{
		Status:             r.Status(),
		LeaderChanges:      r.log.LeaderChanges(),
		SnapshotsInstalled: r.log.SnapshotsInstalled(),
		LogFirst:           r.log.FirstIndex(),
		LogLast:            r.log.LastIndex(),
		Batch:              len(r.batch),
		InFlight:           len(r.proposed),
		AwaitingReply:      len(r.clients),
		Keys:               r.store.Len(),
		Sessions:           r.store.Sessions(),
		Replies:            r.store.Replies(),

		SessionsExpired: r.store.Expired(),
	}
	r.log.Progress(func(id, match uint64) {
		m.Followers = append(m.Followers, protocol.FollowerProgress{ID: wire.NodeID(id), Match: match})
	})
	return m
}
