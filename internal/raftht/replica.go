package raftht

import (
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/readgate"
	"github.com/hybridkv/hybridkv/internal/smr"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Replica is a Raft-HT replica core: the replicated state machine, with
// weak reads answered from the applied state under their floor.
type Replica struct {
	*smr.Replica
	reads *readgate.Gate
	// ignoreFloors answers every weak read at once, floor or not (a
	// mutation test's bug; see IgnoreFloors).
	ignoreFloors bool
}

var _ protocol.Replica = (*Replica)(nil)

// NewReplica builds a Raft-HT replica core.
func NewReplica(cfg coreconfig.Config, opts smr.Options) (*Replica, error) {
	base, err := smr.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	r := &Replica{Replica: base, reads: readgate.New()}
	// Entries logged before a restart and not applied yet are appended
	// as far as the gate is concerned.
	base.EachUnapplied(func(index uint64, req *wire.Request) { r.reads.Appended(index, &req.Op) })
	return r, nil
}

// IgnoreFloors makes the replica answer weak reads without waiting for
// their session's floor. It is a bug the checked simulation must catch in
// the protocols that send floors (package protocols' mutation tests).
func (r *Replica) IgnoreFloors() { r.ignoreFloors = true }

// Step implements protocol.Replica: raft's messages go to the log; a weak
// read is answered here; any other request is logged by the leader, or
// answered from the session table if it already applied.
func (r *Replica) Step(from wire.NodeID, m wire.Message) {
	switch m := m.(type) {
	case *wire.Raft:
		r.StepRaft(from, m)
	case *wire.Request:
		switch {
		case m.Op.Level == wire.Weak && !m.Op.Kind.IsWrite():
			r.weakRead(from, m)
		case !r.IsLeader():
			r.ReplyAfterWrite(from, &wire.Reply{Kind: wire.ReplyNotLeader, ID: m.Op.ID})
		case !r.AnswerApplied(from, m):
			r.Propose(from, m)
		}
	}
}

// weakRead answers a weak read once the applied state reflects its floor;
// one flagged FlagServeNow is refused rather than kept waiting.
func (r *Replica) weakRead(from wire.NodeID, req *wire.Request) {
	switch {
	case r.ignoreFloors:
		r.answer(from, req, readgate.Serve)
	case req.Flags&wire.FlagServeNow == 0:
		r.reads.Serve(r, from, req, r.answer)
	default:
		if v := r.reads.Check(r, req); v != readgate.Wait {
			r.answer(from, req, v)
		} else {
			r.ReplyNow(from, wire.BehindReply(req.Op.ID, r.AppliedIndex()))
		}
	}
}

// answer answers a weak read the gate let go. A floor's position that
// another entry replaced (a weak write the leader answered once it logged
// it, then lost) is answered lost: the client asks the log instead.
func (r *Replica) answer(from wire.NodeID, req *wire.Request, v readgate.Verdict) {
	r.ReplyNow(from, readgate.Answer(r.Store(), req, v))
}

// Ready implements protocol.Replica: the state machine's round, with the
// gate told of every entry appended and applied, and the parked reads
// whose floor the round reached answered once it settled.
func (r *Replica) Ready() protocol.Ready {
	r.Begin()
	for ev := r.Next(); ev.Kind != smr.Done; ev = r.Next() {
		switch ev.Kind {
		case smr.Appended:
			r.reads.Appended(ev.Index, &ev.Req.Op)
		case smr.Applied:
			r.reads.Applied(ev.Index, &ev.Req.Op)
		case smr.Settled:
			r.reads.Release(r, r.answer)
		}
	}
	return r.Output()
}

// Metrics implements protocol.Replica.
func (r *Replica) Metrics() protocol.Metrics {
	m := r.Replica.Metrics()
	m.Own = append(m.Own, readgate.ParkedReads(r.reads.Parked()))
	return m
}
