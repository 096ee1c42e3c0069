package curpht

import (
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Replica is CURP-HT's extension of a CURP replica.
type Replica struct{}

var _ curp.Extension = Replica{}

// Weak logs a weak write on the leader and answers a weak read from the
// applied state.
func (Replica) Weak(r *curp.Replica, from wire.NodeID, req *wire.Request) {
	op := &req.Op
	if !op.Kind.IsWrite() {
		st := r.Store()
		v, found := st.Read(op.Key)
		r.Reply(from, &wire.Reply{Kind: wire.ReplyWeak, ID: op.ID, Ok: true,
			Found: found, Value: v.Value, Slot: v.Slot, Applied: st.Applied()})
		return
	}
	if !r.IsLeader() {
		r.Reply(from, &wire.Reply{Kind: wire.ReplyNotLeader, ID: op.ID})
		return
	}
	r.Propose(from, req)
}

// Conflicts: every unapplied operation on the leader counts, weak writes
// included, so a strong read behind a pending weak write waits for it.
func (Replica) Conflicts(*witness.Record, *wire.Op) bool { return true }

// Admit: strong operations need no ordering beyond CURP's.
func (Replica) Admit(*curp.Replica, wire.NodeID, *wire.Request) bool { return true }

// Annotate adds nothing to CURP's replies.
func (Replica) Annotate(*curp.Replica, *wire.Op, *wire.Reply) {}

// Applied needs no action: the leader answers weak writes on apply.
func (Replica) Applied(*curp.Replica, uint64, *wire.Request, kvstore.Result) {}
