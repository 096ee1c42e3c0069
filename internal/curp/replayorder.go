package curp

import (
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// replayOrder picks the operations at least threshold witnesses recorded
// and orders them for the replay.
//
// Two kinds of order constrain it. An operation goes after its session's
// previous weak write (Request.PrevWeak), always: a hybrid protocol logs an
// operation only after that write, so a replay that put it first would have
// it held back while other sessions' operations, replayed after it,
// overtook it — and one of those may have been invoked after it completed.
// Otherwise operations go in the order the witnesses saw them arrive: an
// operation that any witness recorded before another comes first, so an
// operation invoked after another completed is not replayed before it.
// Where witnesses disagree (concurrent operations that reached them in
// different orders) the first witness to decide wins, and the previous-weak
// order wins over any witness.
func replayOrder(lists [][]witness.Entry, threshold int) []witness.Entry {
	g := newReplayGraph(lists, threshold)
	g.sessionOrder()
	for _, list := range lists {
		g.arrivalOrder(list)
	}
	return g.sort()
}

// replayGraph holds the chosen operations, in order of first appearance,
// and the edges between them.
type replayGraph struct {
	all   []witness.Entry
	index map[wire.OpID]int
	// hardAfter and softAfter list the operations that must, or should,
	// follow each one; before and hardBefore count the edges into each
	// one not yet satisfied.
	hardAfter, softAfter [][]int
	before, hardBefore   []int
	drawn                map[[2]int]bool
}

func newReplayGraph(lists [][]witness.Entry, threshold int) *replayGraph {
	counts := make(map[wire.OpID]int)
	var seen []witness.Entry
	for _, list := range lists {
		for _, e := range list {
			if counts[e.Op.ID] == 0 {
				seen = append(seen, e)
			}
			counts[e.Op.ID]++
		}
	}
	g := &replayGraph{index: make(map[wire.OpID]int), drawn: make(map[[2]int]bool)}
	for _, e := range seen {
		if counts[e.Op.ID] >= threshold {
			g.index[e.Op.ID] = len(g.all)
			g.all = append(g.all, e)
		}
	}
	n := len(g.all)
	g.hardAfter, g.softAfter = make([][]int, n), make([][]int, n)
	g.before, g.hardBefore = make([]int, n), make([]int, n)
	return g
}

// sessionOrder draws an edge to each operation from the session's previous
// weak write, when both are chosen: what a hybrid protocol's leader waits
// for before it logs an operation (see Request.PrevWeak). Nothing else in a
// session is ordered this way: operations a session had in flight together
// are concurrent, and arrival order decides between them as between
// sessions.
func (g *replayGraph) sessionOrder() {
	for b, e := range g.all {
		if e.PrevWeak == 0 {
			continue
		}
		a, ok := g.index[wire.OpID{Session: e.Op.ID.Session, Seq: e.PrevWeak}]
		if !ok {
			continue
		}
		g.drawn[[2]int{a, b}] = true
		g.hardAfter[a] = append(g.hardAfter[a], b)
		g.before[b]++
		g.hardBefore[b]++
	}
}

// arrivalOrder draws an edge between each two chosen operations one witness
// recorded one after the other, unless an edge between them is drawn.
func (g *replayGraph) arrivalOrder(list []witness.Entry) {
	prev := -1
	for _, e := range list {
		i, ok := g.index[e.Op.ID]
		if !ok {
			continue
		}
		if prev >= 0 && !g.drawn[[2]int{prev, i}] && !g.drawn[[2]int{i, prev}] {
			g.drawn[[2]int{prev, i}] = true
			g.softAfter[prev] = append(g.softAfter[prev], i)
			g.before[i]++
		}
		prev = i
	}
}

// sort takes, each time, the earliest-seen operation nothing pending must
// precede. Witnesses that disagree further apart leave a cycle; it is broken
// at an operation whose previous weak write is taken (see leastContested),
// which always exists because those edges have no cycle (each points to a
// higher sequence number of the same session).
func (g *replayGraph) sort() []witness.Entry {
	out := make([]witness.Entry, 0, len(g.all))
	done := make([]bool, len(g.all))
	for len(out) < len(g.all) {
		pick := g.first(done)
		if pick < 0 {
			pick = g.leastContested(done)
		}
		done[pick] = true
		out = append(out, g.all[pick])
		for _, next := range g.hardAfter[pick] {
			g.before[next]--
			g.hardBefore[next]--
		}
		for _, next := range g.softAfter[pick] {
			g.before[next]--
		}
	}
	return out
}

// first returns the earliest-seen operation not done that no pending edge
// must precede, or -1.
func (g *replayGraph) first(done []bool) int {
	for i := range g.all {
		if !done[i] && g.before[i] == 0 {
			return i
		}
	}
	return -1
}

// leastContested breaks a cycle: of the operations whose previous weak
// write is taken, the one fewest pending witness orders still put after
// something (the earliest-seen of those), so the replay overrides as few
// witnesses as it can.
func (g *replayGraph) leastContested(done []bool) int {
	pick := -1
	for i := range g.all {
		if !done[i] && g.hardBefore[i] == 0 && (pick < 0 || g.before[i] < g.before[pick]) {
			pick = i
		}
	}
	return pick
}
