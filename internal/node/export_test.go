package node

import (
	"math"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// NewDetached returns a node without a transport, whose sends go to send
// and whose rounds have no time budget, for tests that hand its loop
// what another driver was handed.
func NewDetached(cfg Config, send func([]wire.Envelope)) *Node {
	r := newNode(cfg)
	r.loop.Send = send
	r.budget = math.MaxInt64
	return r
}

// Put is the transport handing the loop a message.
func (r *Node) Put(from wire.NodeID, m wire.Message) { r.loop.Inbox.Put(from, m) }

// RunRound is one iteration of Run's loop.
func (r *Node) RunRound(ev protocol.Event) (arm bool) { return r.round(ev) }

// TakeWrite is the writer taking the rounds waiting.
func (r *Node) TakeWrite() (protocol.Batch, bool) { return r.loop.Writes.Take() }

// Write is the writer doing a batch.
func (r *Node) Write(b protocol.Batch) { r.write(b) }
