package curp

import (
	"cmp"
	"container/heap"
	"math"
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// replayOrder picks the operations that at least threshold of the lists
// (complete witnesses' records, in the order each witness received them)
// hold and done does not (the new leader applied or logged them), and
// orders them for the replay. late is ⌊f/2⌋: how many of the lists can
// belong to witnesses outside a fast-path operation's superquorum.
//
// What the order must keep, and why these rules keep it, is argued in
// docs/protocols.md ("The replay order"). In short, three kinds of order
// are drawn, strongest first:
//
//   - an operation goes after its session's previous weak write (the
//     leader logs an operation only after that write);
//   - a strong read that may have completed on the fast path keeps the value
//     it returned: the write its superquorum named goes before it, and
//     every other write to its key goes before that write or after the read;
//   - a strong operation X goes before an operation Y unless more than late
//     lists lack X or hold Y before X. If X completed on the fast path
//     before Y was invoked, every list of X's superquorum holds X ahead of
//     Y, and at most late lists are outside it; so every such order is
//     drawn (and more: X may merely have reached most witnesses first).
//
// These orders can disagree only when the lists do (a cycle of strong
// operations each ahead of the next in all but late lists); the weakest
// order of the cycle then goes (ranked pairs). Everything else is left to
// the order in which operations first appear in the lists.
func replayOrder(lists [][]witness.Entry, done func(wire.OpID) bool, threshold, late int) []witness.Entry {
	if broken.voteTies {
		return voteOrder(filterDone(lists, done), threshold)
	}
	g := newOrderGraph(lists, done, threshold)
	if !broken.replayUnordered {
		g.sessionOrder()
	}
	g.fastPathOrder(late)
	choices := g.readDeps(lists, done, late)
	g.breakCycles()
	if len(choices) > 0 {
		g.choose(choices)
		g.breakCycles()
	}
	return g.sort()
}

func filterDone(lists [][]witness.Entry, done func(wire.OpID) bool) [][]witness.Entry {
	out := make([][]witness.Entry, len(lists))
	for l, list := range lists {
		out[l] = slices.DeleteFunc(slices.Clone(list), func(e witness.Entry) bool { return done(e.Op.ID) })
	}
	return out
}

// Ranks of the orders drawn, strongest first; a fast-path order's rank
// grows with the lists that do not support it, and between operations that
// commute it ranks below one between operations that conflict.
const (
	rankSession = iota
	rankReadDep
	rankFastPath
)

type orderEdge struct {
	from, to int32
	rank     int32
}

// orderGraph holds the chosen operations, in order of first appearance,
// each one's position in every list, and the orders drawn between them.
type orderGraph struct {
	all   []witness.Entry
	index map[wire.OpID]int
	// pos[l][i] is operation i's place among the chosen ones in list l,
	// or -1 when list l lacks it.
	pos   [][]int32
	edges []orderEdge
}

func newOrderGraph(lists [][]witness.Entry, done func(wire.OpID) bool, threshold int) *orderGraph {
	counts := make(map[wire.OpID]int)
	var seen []witness.Entry
	for _, list := range lists {
		for _, e := range list {
			if done(e.Op.ID) {
				continue
			}
			if counts[e.Op.ID] == 0 {
				seen = append(seen, e)
			}
			counts[e.Op.ID]++
		}
	}
	g := &orderGraph{index: make(map[wire.OpID]int)}
	for _, e := range seen {
		if counts[e.Op.ID] >= threshold {
			g.index[e.Op.ID] = len(g.all)
			g.all = append(g.all, e)
		}
	}
	g.pos = make([][]int32, len(lists))
	for l, list := range lists {
		g.pos[l] = slices.Repeat([]int32{-1}, len(g.all))
		n := int32(0)
		for _, e := range list {
			if i, ok := g.index[e.Op.ID]; ok && g.pos[l][i] < 0 {
				g.pos[l][i] = n
				n++
			}
		}
	}
	return g
}

func (g *orderGraph) add(from, to, rank int) {
	g.edges = append(g.edges, orderEdge{from: int32(from), to: int32(to), rank: int32(rank)})
}

// sessionOrder orders each operation after its session's previous weak
// write, when both are chosen.
func (g *orderGraph) sessionOrder() {
	for b, e := range g.all {
		if e.PrevWeak == 0 {
			continue
		}
		if a, ok := g.index[wire.OpID{Session: e.Op.ID.Session, Seq: e.PrevWeak}]; ok {
			g.add(a, b, rankSession)
		}
	}
}

// fastPathOrder puts a strong operation X before every operation Y that at
// most late lists contradict, a list contradicting when it lacks X or holds
// Y before X.
func (g *orderGraph) fastPathOrder(late int) {
	for x, e := range g.all {
		if e.Op.Level != wire.Strong {
			continue
		}
		for y := range g.all {
			if y == x {
				continue
			}
			if against := g.against(x, y, late); against <= late {
				rank := rankFastPath + 2*against
				if !e.Op.Conflicts(&g.all[y].Op) {
					rank++
				}
				g.add(x, y, rank)
			}
		}
	}
}

// against counts the lists that lack x or hold y before x, stopping once
// the count passes limit.
func (g *orderGraph) against(x, y, limit int) int {
	n := 0
	for _, pos := range g.pos {
		if px, py := pos[x], pos[y]; px < 0 || (py >= 0 && py < px) {
			n++
			if n > limit {
				break
			}
		}
	}
	return n
}

// readDeps keeps what a strong read that may have completed on the fast
// path returned. Its superquorum's witnesses named the latest weak write
// they held on its key as its read dependency and agreed on it; all but
// late lists hold the read, each with that write as its latest before it.
// The write goes before the read (if not logged already), and every other
// chosen write to the key either before that write or after the read;
// which of the two is chosen once the other orders are drawn (see choose).
// The lists are taken whole here, done operations included: a read's
// dependency may be logged already.
func (g *orderGraph) readDeps(lists [][]witness.Entry, done func(wire.OpID) bool, late int) []depChoice {
	var choices []depChoice
	for r, e := range g.all {
		if e.Op.Level != wire.Strong || e.Op.Kind.IsWrite() {
			continue
		}
		dep, ok := readDep(lists, e.Op, len(lists)-late, done)
		if !ok {
			continue // the read did not complete on the fast path
		}
		d, chosen := g.index[dep]
		if !chosen {
			d = -1
		}
		if dep != (wire.OpID{}) && !chosen && !done(dep) {
			continue // not held widely enough: the read was not fast
		}
		// With no dependency (the read returned the applied value), or
		// one already logged, every chosen write to the key goes after the
		// read.
		if chosen {
			g.add(d, r, rankReadDep)
		}
		for w, o := range g.all {
			if w == r || w == d || o.Op.Key != e.Op.Key || !o.Op.Kind.IsWrite() {
				continue
			}
			if chosen {
				choices = append(choices, depChoice{read: r, dep: d, write: w})
			} else {
				g.add(r, w, rankReadDep)
			}
		}
	}
	return choices
}

// depChoice is another write to a read's key, to be ordered before the
// read's dependency or after the read.
type depChoice struct{ read, dep, write int }

// choose places each such write. A read's superquorum members hold the
// write either before the dependency or after the read, and the replay
// must agree with the history's required orders, so the evidence is taken
// most certain first: the certain orders (sessions' previous weak writes,
// read dependencies) putting the write before the read, or the read or its
// dependency before the write; then every order drawn; then the lists
// themselves, whichever place more of them show. The orders the choice
// contradicts rank below it and go when cycles are broken.
func (g *orderGraph) choose(choices []depChoice) {
	for _, c := range choices {
		toRead, toWrite := g.reaching(c.read, rankReadDep), g.reaching(c.write, rankReadDep)
		before := toRead[c.write]
		switch {
		case before:
		case toWrite[c.read] || toWrite[c.dep]:
		default:
			toRead, toWrite = g.reaching(c.read, math.MaxInt32), g.reaching(c.write, math.MaxInt32)
			switch {
			case toRead[c.write] && !toWrite[c.read] && !toWrite[c.dep]:
				before = true
			case !toWrite[c.read] && !toWrite[c.dep]:
				ahead, behind := g.listPlaces(c)
				before = ahead > behind
			}
		}
		if before {
			g.add(c.write, c.dep, rankReadDep)
		} else {
			g.add(c.read, c.write, rankReadDep)
		}
	}
}

// listPlaces counts the lists holding c's write before its dependency,
// and those holding it after its read.
func (g *orderGraph) listPlaces(c depChoice) (ahead, behind int) {
	for _, pos := range g.pos {
		w, d, r := pos[c.write], pos[c.dep], pos[c.read]
		switch {
		case w < 0:
		case d >= 0 && w < d:
			ahead++
		case r >= 0 && w > r:
			behind++
		}
	}
	return ahead, behind
}

// readDep returns the write that at least quorum of the lists holding read
// name as its read dependency (the zero id: none), if there is one. A list
// names, as a witness does, the latest weak write to the key before the
// read, provided the list holds that write's session's earlier weak writes
// before the read too (or done has them); else nothing usable.
func readDep(lists [][]witness.Entry, read wire.Op, quorum int, done func(wire.OpID) bool) (wire.OpID, bool) {
	votes := make(map[wire.OpID]int)
	for _, list := range lists {
		var latest *witness.Entry
		held := make(map[wire.OpID]*witness.Entry)
		for i := range list {
			e := &list[i]
			if e.Op.ID == read.ID {
				switch {
				case latest == nil:
					votes[wire.OpID{}]++
				case chainHeld(latest, held, done):
					votes[latest.Op.ID]++
				}
				break
			}
			held[e.Op.ID] = e
			if e.Op.Level == wire.Weak && e.Op.Kind.IsWrite() && e.Op.Key == read.Key {
				latest = e
			}
		}
	}
	for dep, n := range votes {
		if n >= quorum {
			return dep, true
		}
	}
	return wire.OpID{}, false
}

// chainHeld reports whether held (or done) has every earlier weak write of
// w's session, following the previous weak writes.
func chainHeld(w *witness.Entry, held map[wire.OpID]*witness.Entry, done func(wire.OpID) bool) bool {
	for prev := w.PrevWeak; prev != 0; {
		id := wire.OpID{Session: w.Op.ID.Session, Seq: prev}
		if done(id) {
			return true
		}
		e, ok := held[id]
		if !ok {
			return false
		}
		prev = e.PrevWeak
	}
	return true
}

// reaching marks the operations from which the orders drawn so far of
// rank up to maxRank lead to target.
func (g *orderGraph) reaching(target int, maxRank int32) []bool {
	into := make([][]int32, len(g.all))
	for _, e := range g.edges {
		if e.rank <= maxRank {
			into[e.to] = append(into[e.to], e.from)
		}
	}
	seen := make([]bool, len(g.all))
	stack := []int32{int32(target)}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range into[n] {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return seen
}

// breakCycles keeps, inside each strongly connected set of operations, the
// orders strongest first, each unless it closes a cycle with those kept.
// Orders between such sets never close one.
func (g *orderGraph) breakCycles() {
	comp := g.components()
	var kept, inner []orderEdge
	for _, e := range g.edges {
		if comp[e.from] == comp[e.to] {
			inner = append(inner, e)
		} else {
			kept = append(kept, e)
		}
	}
	if len(inner) == 0 {
		return
	}
	slices.SortStableFunc(inner, func(a, b orderEdge) int { return cmp.Compare(a.rank, b.rank) })
	after := make(map[int32][]int32)
	for _, e := range inner {
		if !reaches(after, e.to, e.from) {
			after[e.from] = append(after[e.from], e.to)
			kept = append(kept, e)
		}
	}
	g.edges = kept
}

func reaches(after map[int32][]int32, from, to int32) bool {
	seen := map[int32]bool{from: true}
	stack := []int32{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == to {
			return true
		}
		for _, m := range after[n] {
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return false
}

// components numbers the strongly connected components of the orders drawn
// (Tarjan's algorithm, without recursion).
func (g *orderGraph) components() []int {
	n := len(g.all)
	after := make([][]int32, n)
	for _, e := range g.edges {
		after[e.from] = append(after[e.from], e.to)
	}
	index, low, comp := make([]int, n), make([]int, n), make([]int, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	onStack := make([]bool, n)
	var stack []int
	type frame struct{ node, next int }
	counter, comps := 0, 0
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		calls := []frame{{node: root}}
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			top := &calls[len(calls)-1]
			v := top.node
			if top.next < len(after[v]) {
				w := int(after[v][top.next])
				top.next++
				switch {
				case index[w] < 0:
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{node: w})
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = comps
					if w == v {
						break
					}
				}
				comps++
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				p := calls[len(calls)-1].node
				low[p] = min(low[p], low[v])
			}
		}
	}
	return comp
}

// sort lists the operations in an order that keeps every order kept,
// taking each time the earliest-seen operation whose predecessors are all
// listed.
func (g *orderGraph) sort() []witness.Entry {
	after := make([][]int32, len(g.all))
	before := make([]int, len(g.all))
	for _, e := range g.edges {
		after[e.from] = append(after[e.from], e.to)
		before[e.to]++
	}
	ready := &intHeap{}
	for i, n := range before {
		if n == 0 {
			heap.Push(ready, i)
		}
	}
	out := make([]witness.Entry, 0, len(g.all))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		out = append(out, g.all[i])
		for _, n := range after[i] {
			if before[n]--; before[n] == 0 {
				heap.Push(ready, int(n))
			}
		}
	}
	return out
}

// intHeap is a min-heap of operation numbers: the earliest seen first.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
