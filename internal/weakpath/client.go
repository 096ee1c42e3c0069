package weakpath

import (
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curpclient"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Escalate sends a weak read whose speculative floor was lost down the
// strong path. A linearizable read reflects every operation that completed
// before it, so the session's causal past too, and its result gives the
// session a floor that every replica's log can reach. It happens only after
// a leader lost operations it had completed on the fast path.
func Escalate(c *curpclient.Client, p *curpclient.Pending) {
	p.Req.Op.Level = wire.Strong
	p.Req.MinApplied, p.Req.SpecFloor, p.Req.ReadAfter = 0, wire.Position{}, nil
	p.Req.Flags &^= wire.FlagReplyWanted | wire.FlagRetry
	p.Targets = c.Replicas()
	c.SendStrong(p)
}

// ObserveCompletion raises the session's floor to what a completed
// operation observed: a fast-path result, the leader's speculative
// position; a write or strong operation that went through the log, its
// committed slot; a fast-path read of another session's write not known
// committed, that write. A weak read's floor comes with its reply
// (ObserveState).
func (f Floors) ObserveCompletion(p *curpclient.Pending, done *clientcore.Completion) {
	op := &p.Req.Op
	switch {
	case done.Path == clientcore.PathFast:
		f.ObserveSpeculative(op.ID.Session, wire.Position{Term: p.Spec.Term, Index: done.Slot})
		if !op.Kind.IsWrite() {
			f.ObserveReadDep(op.ID.Session, p.Spec.ReadDep)
		}
	case done.Path == clientcore.PathWeak && !op.Kind.IsWrite():
	case done.Slot > 0:
		f.ObserveCommitted(op.ID, done.Slot)
	}
}
