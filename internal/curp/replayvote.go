package curp

import (
	"cmp"
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// voteOrder is the replay order recoveries drew before replayOrder: it
// picks the operations at least threshold witnesses recorded and orders
// them by the witnesses' votes alone. It is kept for the mutation tests
// (mutation "vote-ties"): at f = 2 a tie between a witness of a fast-path
// operation's superquorum and one outside it went by peer id, and the
// replay could log an operation before another that had completed on the
// fast path before it was invoked.
//
// An operation goes after its session's previous weak write, always: a
// hybrid protocol's leader logs an operation only after that write, so a
// replay that put it first would have it held back while other operations,
// replayed after it, overtook it — and one of those may have been invoked
// after it completed.
//
// Otherwise operations go in the order the witnesses saw them arrive, so
// that an operation invoked after another completed (in the same session
// or not) is not replayed before it. Witnesses may disagree: a record can
// reach a witness late, a retry much later. But an operation that completed
// on the fast path had reached a superquorum before it completed, so at
// most ⌊f/2⌋ replicas can have recorded a later-invoked operation first. So
// each two operations some witness recorded one right after the other are
// ordered by a vote of every witness that recorded both, and the orders are
// taken strongest vote first, each unless it contradicts those taken
// before (ranked pairs): a witness that saw an operation late is outvoted,
// and no set of disagreements can leave a cycle. A tie goes to the first
// witness that saw the two in turn. Operations a session had in flight
// together are concurrent and get no order but the witnesses'.
func voteOrder(lists [][]witness.Entry, threshold int) []witness.Entry {
	g := newVoteGraph(lists, threshold)
	if !broken.replayUnordered {
		g.sessionOrder()
	}
	g.arrivalOrder(lists)
	return g.sort()
}

// voteGraph holds the chosen operations, in order of first appearance,
// and the orders taken between them.
type voteGraph struct {
	all   []witness.Entry
	index map[wire.OpID]int
	after [][]int // after[a]: the operations ordered right after a
	// visit and stamp serve reachable's searches.
	visit []int
	stamp int
}

func newVoteGraph(lists [][]witness.Entry, threshold int) *voteGraph {
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
	g := &voteGraph{index: make(map[wire.OpID]int)}
	for _, e := range seen {
		if counts[e.Op.ID] >= threshold {
			g.index[e.Op.ID] = len(g.all)
			g.all = append(g.all, e)
		}
	}
	g.after = make([][]int, len(g.all))
	g.visit = make([]int, len(g.all))
	return g
}

// sessionOrder orders each operation after its session's previous weak
// write, when both are chosen: what a hybrid protocol's leader waits for
// before it logs an operation (Request.PrevWeak).
func (g *voteGraph) sessionOrder() {
	for b, e := range g.all {
		if e.PrevWeak == 0 {
			continue
		}
		if a, ok := g.index[wire.OpID{Session: e.Op.ID.Session, Seq: e.PrevWeak}]; ok {
			g.after[a] = append(g.after[a], b)
		}
	}
}

// vote is one pair of operations that some witness recorded one right
// after the other: first before second by margin witnesses more than the
// other way round (on a tie, first is the one seen first).
type vote struct {
	first, second int
	margin        int
}

// arrivalOrder takes the witnesses' orders by ranked pairs (see
// replayOrder).
func (g *voteGraph) arrivalOrder(lists [][]witness.Entry) {
	positions := make([]map[int]int, len(lists))
	var votes []vote
	seen := make(map[[2]int]bool)
	for l, list := range lists {
		positions[l] = make(map[int]int, len(list))
		prev := -1
		for _, e := range list {
			i, ok := g.index[e.Op.ID]
			if !ok {
				continue
			}
			positions[l][i] = len(positions[l])
			if prev >= 0 && !seen[[2]int{prev, i}] && !seen[[2]int{i, prev}] {
				seen[[2]int{prev, i}] = true
				votes = append(votes, vote{first: prev, second: i})
			}
			prev = i
		}
	}
	for k := range votes {
		v := &votes[k]
		for _, pos := range positions {
			a, okA := pos[v.first]
			b, okB := pos[v.second]
			switch {
			case !okA || !okB:
			case a < b:
				v.margin++
			default:
				v.margin--
			}
		}
		if v.margin < 0 {
			v.first, v.second, v.margin = v.second, v.first, -v.margin
		}
	}
	// Stable: among equal margins, the pair seen first goes first.
	slices.SortStableFunc(votes, func(a, b vote) int { return cmp.Compare(b.margin, a.margin) })
	for _, v := range votes {
		if !g.reachable(v.second, v.first) {
			g.after[v.first] = append(g.after[v.first], v.second)
		}
	}
}

// reachable reports whether the orders taken lead from a to b.
func (g *voteGraph) reachable(a, b int) bool {
	g.stamp++
	stack := []int{a}
	g.visit[a] = g.stamp
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == b {
			return true
		}
		for _, next := range g.after[n] {
			if g.visit[next] != g.stamp {
				g.visit[next] = g.stamp
				stack = append(stack, next)
			}
		}
	}
	return false
}

// sort lists the operations in an order that keeps every order taken,
// taking each time the earliest-seen operation whose predecessors are all
// listed. The orders have no cycle, so one always is.
func (g *voteGraph) sort() []witness.Entry {
	before := make([]int, len(g.all))
	for _, next := range g.after {
		for _, n := range next {
			before[n]++
		}
	}
	out := make([]witness.Entry, 0, len(g.all))
	done := make([]bool, len(g.all))
	for len(out) < len(g.all) {
		pick := slices.IndexFunc(g.all, func(e witness.Entry) bool {
			i := g.index[e.Op.ID]
			return !done[i] && before[i] == 0
		})
		done[pick] = true
		out = append(out, g.all[pick])
		for _, n := range g.after[pick] {
			before[n]--
		}
	}
	return out
}
