package raftkv

import (
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/smr"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Replica is a Raft baseline replica.
type Replica struct {
	*smr.Replica
}

// NewReplica builds a Raft baseline replica core.
func NewReplica(cfg coreconfig.Config, opts smr.Options) (*Replica, error) {
	base, err := smr.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	r := &Replica{Replica: base}
	base.SetProtocol(hooks{r})
	return r, nil
}

// hooks is the Raft baseline's smr.Protocol: only requests need handling.
type hooks struct{ r *Replica }

func (h hooks) Request(from wire.NodeID, req *wire.Request) {
	r := h.r
	if !r.IsLeader() {
		r.ReplyAfterWrite(from, &wire.Reply{Kind: wire.ReplyNotLeader, ID: req.Op.ID})
		return
	}
	if !r.AnswerApplied(from, req) {
		r.Propose(from, req)
	}
}

func (hooks) Message(wire.NodeID, wire.Message)                          {}
func (hooks) Appended(uint64, *wire.Request)                             {}
func (hooks) Applied(uint64, *wire.Request, kvstore.Result, *wire.Reply) {}
func (hooks) LeaderChanged(bool)                                         {}
func (hooks) Restored()                                                  {}
func (hooks) Compacting()                                                {}
func (hooks) Replaced(uint64)                                            {}
func (hooks) Settled()                                                   {}
func (hooks) Tick()                                                      {}
