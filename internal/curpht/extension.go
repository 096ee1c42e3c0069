package curpht

import (
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/readgate"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Extension is CURP-HT's extension of a CURP replica: it holds the weak
// reads waiting for the replica to catch up with their session.
type Extension struct {
	reads *readgate.Gate
}

var _ curp.Extension = (*Extension)(nil)

// NewExtension returns the extension for one replica.
func NewExtension() *Extension { return &Extension{reads: readgate.New()} }

// Weak logs a weak write on the leader and answers a weak read from the
// applied state, once that reflects the session's floor.
func (x *Extension) Weak(r *curp.Replica, from wire.NodeID, req *wire.Request) {
	op := &req.Op
	if !op.Kind.IsWrite() {
		x.reads.Serve(r, from, req, answerer(r))
		return
	}
	if !r.IsLeader() {
		r.ReplyAfterWrite(from, &wire.Reply{Kind: wire.ReplyNotLeader, ID: op.ID})
		return
	}
	r.Propose(from, req)
}

func answerer(r *curp.Replica) func(wire.NodeID, *wire.Request, readgate.Verdict) {
	return func(from wire.NodeID, req *wire.Request, v readgate.Verdict) {
		// Both answers rest on the applied state and the commit index
		// alone, so neither waits for the round's write.
		if v == readgate.Lost {
			r.ReplyNow(from, wire.LostReply(req.Op.ID))
			return
		}
		st := r.Store()
		val, found := st.Read(req.Op.Key)
		r.ReplyNow(from, &wire.Reply{Kind: wire.ReplyWeak, ID: req.Op.ID, Ok: true,
			Found: found, Value: val.Value, Slot: val.Slot, Applied: st.Applied()})
	}
}

// Conflicts: every unapplied operation on the leader counts, weak writes
// included, so a strong read behind a pending weak write waits for it.
func (*Extension) Conflicts(*witness.Record, *wire.Op) bool { return true }

// Admit: strong operations need no ordering beyond CURP's.
func (*Extension) Admit(*curp.Replica, wire.NodeID, *wire.Request) bool { return true }

// Annotate adds nothing to CURP's replies.
func (*Extension) Annotate(*curp.Replica, *wire.Op, *wire.Reply) {}

// Applied notes the entry for the weak reads' gate.
func (x *Extension) Applied(_ *curp.Replica, index uint64, req *wire.Request, _ kvstore.Result) {
	x.reads.Applied(index, &req.Op)
}

// Appended notes the entry for the weak reads' gate.
func (x *Extension) Appended(_ *curp.Replica, index uint64, req *wire.Request) {
	x.reads.Appended(index, &req.Op)
}

// Settled answers the weak reads whose floor the round's entries reached:
// once a round, since each release looks at every waiting read (after
// every entry, at 3 x 128 sessions it took half a replica's time).
func (x *Extension) Settled(r *curp.Replica) { x.reads.Release(r, answerer(r)) }

// LeaderPools implements curp.Extension: a CURP-HT leader pools what it
// logs only.
func (*Extension) LeaderPools() bool { return false }

// ReadsShowPool implements curp.Extension: CURP-HT annotates nothing.
func (*Extension) ReadsShowPool() bool { return false }

// Metrics implements curp.Extension.
func (x *Extension) Metrics() []protocol.Measure {
	return []protocol.Measure{readgate.ParkedReads(x.reads.Parked())}
}
