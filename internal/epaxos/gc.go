package epaxos

import (
	"github.com/hybridkv/hybridkv/internal/wire"
)

// collector forgets the instances every replica has executed. Each
// replica tells the others, now and then, up to which number each row is
// executed at it (after its records up to then are durable, so a restart
// never needs an instance the others forgot); an instance below every
// replica's mark is dropped from memory.
type collector struct {
	peers []wire.NodeID
	// mine is, per row, the number up to which every instance is executed
	// here; above the executed ones beyond it.
	mine  map[wire.NodeID]uint64
	above map[wire.NodeID]map[uint64]struct{}
	// theirs is each other replica's last announced marks, in the order
	// of peers.
	theirs map[wire.NodeID][]uint64
	// dropped is, per row, the number up to which instances are forgotten.
	dropped map[wire.NodeID]uint64
}

func (g *collector) init(peers []wire.NodeID) {
	g.peers = peers
	g.mine = make(map[wire.NodeID]uint64)
	g.above = make(map[wire.NodeID]map[uint64]struct{})
	g.theirs = make(map[wire.NodeID][]uint64)
	g.dropped = make(map[wire.NodeID]uint64)
}

// executed notes that an instance executed here.
func (g *collector) executed(id wire.Instance) {
	mark := g.mine[id.Replica]
	if id.Num <= mark {
		return
	}
	if id.Num != mark+1 {
		if g.above[id.Replica] == nil {
			g.above[id.Replica] = make(map[uint64]struct{})
		}
		g.above[id.Replica][id.Num] = struct{}{}
		return
	}
	mark++
	for {
		if _, ok := g.above[id.Replica][mark+1]; !ok {
			break
		}
		delete(g.above[id.Replica], mark+1)
		mark++
	}
	g.mine[id.Replica] = mark
}

// forgotten reports whether the instance executed everywhere and was
// dropped here.
func (g *collector) forgotten(id wire.Instance) bool { return id.Num <= g.dropped[id.Replica] }

// marks lists this replica's marks in the order of peers.
func (g *collector) marks() []uint64 {
	out := make([]uint64, len(g.peers))
	for i, p := range g.peers {
		out[i] = g.mine[p]
	}
	return out
}

// announce sends this replica's marks to every replica, itself included,
// once what they rest on is durable: its own marks count, here too, only
// then, so it never forgets an instance a restart would need again.
func (g *collector) announce(r *Replica) {
	m := &wire.EPaxos{Kind: wire.EExecuted, Executed: g.marks()}
	for _, to := range r.peers {
		r.sendAfter(to, m)
	}
}

// note takes another replica's marks.
func (g *collector) note(from wire.NodeID, marks []uint64) {
	if len(marks) == len(g.peers) {
		g.theirs[from] = marks
	}
}

// catchUpBudget bounds how many instances one replica's marks set to
// recover here.
const catchUpBudget = 256

// catchUp recovers the instances another replica executed that this one
// has not committed, all at once: a replica that missed their commits
// would otherwise find them one at a time, each when the executor reaches
// it, a recovery timeout apiece (after a restart or a long partition), or
// never, when no later command needs them (a run's last commands).
func (r *Replica) catchUp(marks []uint64) {
	if len(marks) != len(r.peers) {
		return
	}
	budget := catchUpBudget
	for i, row := range r.peers {
		for n := r.gc.mine[row] + 1; n <= marks[i] && budget > 0; n++ {
			id := wire.Instance{Replica: row, Num: n}
			if r.gc.forgotten(id) {
				continue
			}
			if inst := r.instances[id]; inst == nil || inst.status < wire.ECommitted {
				r.needed(r.get(id))
				budget--
			}
		}
	}
}

// collect drops the instances every replica executed.
func (g *collector) collect(r *Replica) {
	for i, row := range g.peers {
		low := g.mine[row]
		for _, p := range g.peers {
			m, ok := g.theirs[p]
			if !ok {
				return
			}
			low = min(low, m[i])
		}
		for n := g.dropped[row] + 1; n <= low; n++ {
			delete(r.instances, wire.Instance{Replica: row, Num: n})
		}
		g.dropped[row] = max(g.dropped[row], low)
	}
}
