package curpht

import (
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/readgate"
	"github.com/hybridkv/hybridkv/internal/smr"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Replica is a CURP-HT replica core: a CURP replica whose weak reads wait
// in a gate until the replica caught up with their session.
type Replica struct {
	*curp.Replica
	reads *readgate.Gate
}

// weakPath is what the CURP library is told of CURP-HT's weak path: every
// unapplied operation on the leader conflicts, weak writes included, so a
// strong read behind a pending weak write waits for it.
var weakPath = curp.WeakPath{Serve: true}

// NewReplica builds a CURP-HT replica core.
func NewReplica(cfg coreconfig.Config, opts curp.Options) (*Replica, error) {
	opts.WeakPath = weakPath
	base, err := curp.NewReplica(cfg, opts)
	if err != nil {
		return nil, err
	}
	x := &Replica{Replica: base, reads: readgate.New()}
	// Entries logged before a restart and not applied yet are appended
	// as far as the gate is concerned.
	base.EachUnapplied(func(index uint64, req *wire.Request) { x.reads.Appended(index, &req.Op) })
	return x, nil
}

// Step implements protocol.Replica.
func (x *Replica) Step(from wire.NodeID, m wire.Message) {
	if req, ok := m.(*wire.Request); ok && from.IsClient() {
		x.request(from, req)
	} else {
		x.Deliver(from, m)
	}
	for _, q := range x.TakeRequeued() {
		x.request(q.From, q.Req)
	}
}

func (x *Replica) request(from wire.NodeID, req *wire.Request) {
	switch x.Route(from, req) {
	case curp.RouteWeak:
		x.weak(from, req)
	case curp.RouteWitness:
		x.ReplyTo(from, &req.Op, x.Witness(req))
	case curp.RouteLead:
		x.ProposeInOrder(from, req)
	}
}

// weak logs a weak write on the leader and answers a weak read from the
// applied state, once that reflects the session's floor.
func (x *Replica) weak(from wire.NodeID, req *wire.Request) {
	op := &req.Op
	if !op.Kind.IsWrite() {
		x.reads.Serve(x, from, req, x.answer)
		return
	}
	if !x.IsLeader() {
		x.ReplyAfterWrite(from, &wire.Reply{Kind: wire.ReplyNotLeader, ID: op.ID})
		return
	}
	x.Propose(from, req)
}

// answer answers a weak read the gate let go.
func (x *Replica) answer(from wire.NodeID, req *wire.Request, v readgate.Verdict) {
	x.ReplyNow(from, readgate.Answer(x.Store(), req, v))
}

// Ready implements protocol.Replica: CURP's round, with the gate told of
// every entry appended and applied. Settled answers the weak reads whose
// floor the round's entries reached: once a round, since each release
// looks at every waiting read (after every entry, at 3 x 128 sessions it
// took half a replica's time).
func (x *Replica) Ready() protocol.Ready {
	x.Begin()
	for ev := x.Next(); ev.Kind != smr.Done; ev = x.Next() {
		if spec := x.Handle(ev); spec.Reply != nil {
			x.ReplyTo(spec.To, spec.Op, spec.Reply)
		}
		switch ev.Kind {
		case smr.Appended:
			x.reads.Appended(ev.Index, &ev.Req.Op)
		case smr.Applied:
			x.reads.Applied(ev.Index, &ev.Req.Op)
		case smr.Settled:
			x.reads.Release(x, x.answer)
		}
		for _, q := range x.TakeRequeued() {
			x.request(q.From, q.Req)
		}
	}
	return x.Output()
}

// Metrics implements protocol.Replica.
func (x *Replica) Metrics() protocol.Metrics {
	m := x.Replica.Metrics()
	m.Own = append(m.Own, readgate.ParkedReads(x.reads.Parked()))
	return m
}
