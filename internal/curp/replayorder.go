package curp

import (
	"cmp"
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// replayOrder picks the operations at least threshold witnesses recorded
// and orders them for the replay.
//
// Two kinds of order constrain it. A session's operations go in the order
// the session issued them (by sequence number), always: a hybrid protocol
// logs an operation only after the session's previous weak write, so a
// replay that put a later operation first would have it held back while
// other sessions' operations, replayed after it, overtook it — and one of
// those may have been invoked after it completed. Across sessions,
// operations go in the order the witnesses saw them arrive: an operation
// that any witness recorded before another comes first, so an operation
// invoked after another completed is not replayed before it. Where
// witnesses disagree (concurrent operations that reached them in different
// orders) the first witness to decide wins; where disagreements further
// apart leave a cycle, it is broken where it overrides the fewest witness
// orders that session order allows.
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

// sessionOrder draws an edge from each operation to its session's next
// chosen one.
func (g *replayGraph) sessionOrder() {
	bySession := make(map[uint64][]int)
	for i, e := range g.all {
		bySession[e.Op.ID.Session] = append(bySession[e.Op.ID.Session], i)
	}
	for _, ops := range bySession {
		slices.SortFunc(ops, func(a, b int) int { return cmp.Compare(g.all[a].Op.ID.Seq, g.all[b].Op.ID.Seq) })
		for k := 1; k < len(ops); k++ {
			a, b := ops[k-1], ops[k]
			g.drawn[[2]int{a, b}] = true
			g.hardAfter[a] = append(g.hardAfter[a], b)
			g.before[b]++
			g.hardBefore[b]++
		}
	}
}

// arrivalOrder draws an edge between each two chosen operations one witness
// recorded one after the other, unless an edge between them is drawn or
// they are of one session (session order decides those, and a witness that
// saw them the other way round only received one late).
func (g *replayGraph) arrivalOrder(list []witness.Entry) {
	prev := -1
	for _, e := range list {
		i, ok := g.index[e.Op.ID]
		if !ok {
			continue
		}
		if prev >= 0 && !g.sameSession(prev, i) && !g.drawn[[2]int{prev, i}] && !g.drawn[[2]int{i, prev}] {
			g.drawn[[2]int{prev, i}] = true
			g.softAfter[prev] = append(g.softAfter[prev], i)
			g.before[i]++
		}
		prev = i
	}
}

func (g *replayGraph) sameSession(a, b int) bool {
	return g.all[a].Op.ID.Session == g.all[b].Op.ID.Session
}

// sort takes, each time, the earliest-seen operation nothing pending must
// precede. Witnesses that disagree further apart leave a cycle; it is broken
// at an operation whose session predecessors are all taken (see
// leastContested), which always exists because session order has no cycle.
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

// leastContested breaks a cycle: of the operations whose session
// predecessors are all taken, the one fewest pending witness orders still
// put after something (the earliest-seen of those), so the replay
// overrides as few witnesses as it can.
func (g *replayGraph) leastContested(done []bool) int {
	pick := -1
	for i := range g.all {
		if !done[i] && g.hardBefore[i] == 0 && (pick < 0 || g.before[i] < g.before[pick]) {
			pick = i
		}
	}
	return pick
}
