package transport

import (
	"slices"
	"sync/atomic"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Clients is the PeerStats.Peer of the entry that adds up every node that is
// not a configured peer: clients come and go under fresh IDs, and one entry
// each would grow without bound.
const Clients wire.NodeID = 0

// PeerStats is what a transport holds and has exchanged for one configured
// peer, or for all clients together.
type PeerStats struct {
	Peer wire.NodeID
	// Connections counts the open connections messages to Peer leave on
	// (at most one for a configured peer).
	Connections int
	// QueuedBytes are encoded frames waiting to be written; QueuedFrames
	// counts those the emulated delay still holds back (zero on links
	// without delay, whose frames are written as soon as the writer runs).
	QueuedBytes, QueuedFrames int
	// BytesSent and BytesReceived count frame bytes since New, over every
	// connection the peer had.
	BytesSent, BytesReceived uint64
}

// traffic counts frame bytes exchanged with one peer across its
// connections; the writer and the reader add to it once per write and per
// frame.
type traffic struct{ sent, received atomic.Uint64 }

// trafficOf is the counter a connection with node id adds to: the peer's
// own, or the one all clients share. The map is fixed at New, so no lock.
func (t *Transport) trafficOf(id wire.NodeID) *traffic {
	if tr, ok := t.traffic[id]; ok {
		return tr
	}
	return &t.clientTraffic
}

// PeerStats reports every configured peer, in ID order, then the clients.
// It takes each connection's lock briefly, once; safe for concurrent use.
func (t *Transport) PeerStats() []PeerStats {
	ids := make([]wire.NodeID, 0, len(t.dialers))
	for id := range t.dialers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]PeerStats, 0, len(ids)+1)
	for _, id := range ids {
		ps := PeerStats{Peer: id}
		if c := t.dialers[id].cur.Load(); c != nil {
			ps.add(c)
		}
		ps.count(t.traffic[id])
		out = append(out, ps)
	}
	cl := PeerStats{Peer: Clients}
	t.routesMu.RLock()
	for id, c := range t.accepted {
		if _, peer := t.dialers[id]; !peer {
			cl.add(c)
		}
	}
	t.routesMu.RUnlock()
	cl.count(&t.clientTraffic)
	return append(out, cl)
}

func (ps *PeerStats) add(c *conn) {
	bytes, frames := c.queued()
	ps.Connections++
	ps.QueuedBytes += bytes
	ps.QueuedFrames += frames
}

func (ps *PeerStats) count(tr *traffic) {
	ps.BytesSent, ps.BytesReceived = tr.sent.Load(), tr.received.Load()
}

// queued reports the bytes and the delayed frames waiting in the queue.
func (c *conn) queued() (bytes, frames int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.buf) - c.off, len(c.marks) - c.markOff
}
