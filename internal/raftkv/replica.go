package raftkv

import (
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/smr"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Replica is a Raft baseline replica core: the replicated state machine,
// with client requests answered by the leader once applied.
type Replica struct {
	*smr.Replica
}

var _ protocol.Replica = (*Replica)(nil)

// NewReplica builds a Raft baseline replica core.
func NewReplica(cfg coreconfig.Config, opts smr.Options) (*Replica, error) {
	base, err := smr.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &Replica{Replica: base}, nil
}

// Step implements protocol.Replica: raft's messages go to the log; a
// request is logged by the leader, or answered from the session table if
// it already applied.
func (r *Replica) Step(from wire.NodeID, m wire.Message) {
	switch m := m.(type) {
	case *wire.Raft:
		r.StepRaft(from, m)
	case *wire.Request:
		if !r.IsLeader() {
			r.ReplyAfterWrite(from, &wire.Reply{Kind: wire.ReplyNotLeader, ID: m.Op.ID})
			return
		}
		if !r.AnswerApplied(from, m) {
			r.Propose(from, m)
		}
	}
}

// Ready implements protocol.Replica: the state machine's round needs no
// follow-up.
func (r *Replica) Ready() protocol.Ready {
	r.Begin()
	for r.Next().Kind != smr.Done {
	}
	return r.Output()
}
