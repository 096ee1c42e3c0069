package curp

import (
	"cmp"
	"container/heap"
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
//     None is drawn from an operation that cannot have completed on the
//     fast path (see slowOnly and readDeps), nor one a read's dependency
//     rules out.
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
	g.slowOnly(lists, done, len(lists)-late)
	choices := g.readDeps(lists, done, late)
	g.fastPathOrder(late)
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
	// refuted holds the fast-path orders a read's dependency rules out
	// (see readDeps); notFast the strong operations that cannot have
	// completed on the fast path (see slowOnly).
	refuted map[[2]int]bool
	notFast []bool
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
	g := &orderGraph{index: make(map[wire.OpID]int), refuted: make(map[[2]int]bool)}
	for _, e := range seen {
		if counts[e.Op.ID] >= threshold {
			g.index[e.Op.ID] = len(g.all)
			g.all = append(g.all, e)
		}
	}
	g.notFast = make([]bool, len(g.all))
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
// slowOnly marks the strong operations that cannot have completed on the
// fast path because fewer than quorum lists hold, before them, their
// session's earlier weak writes (or done has them): a superquorum's
// replies each held the client's write set.
func (g *orderGraph) slowOnly(lists [][]witness.Entry, done func(wire.OpID) bool, quorum int) {
	held := make([]int, len(g.all))
	for _, list := range lists {
		chains := newListChains(list, done)
		for i := range list {
			x, ok := g.index[list[i].Op.ID]
			if ok && chains.at[list[i].Op.ID] == i && chains.heldBefore(i, i) {
				held[x]++
			}
		}
	}
	for x, e := range g.all {
		if e.Op.Level == wire.Strong && held[x] < quorum {
			g.notFast[x] = true
		}
	}
}

func (g *orderGraph) fastPathOrder(late int) {
	strong := 0
	for _, e := range g.all {
		if e.Op.Level == wire.Strong {
			strong++
		}
	}
	g.edges = slices.Grow(g.edges, strong*len(g.all)/2)
	for x, e := range g.all {
		if e.Op.Level != wire.Strong || g.notFast[x] {
			continue
		}
		for y := range g.all {
			if y == x {
				continue
			}
			if against := g.against(x, y, late); against <= late && !g.refuted[[2]int{x, y}] {
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
	quorum := len(lists) - late
	named := g.namedDeps(lists, done)
	writes := make(map[string][]int)
	for w, o := range g.all {
		if o.Op.Kind.IsWrite() {
			writes[o.Op.Key] = append(writes[o.Op.Key], w)
		}
	}
	for r, e := range g.all {
		if e.Op.Level != wire.Strong || e.Op.Kind.IsWrite() || g.notFast[r] {
			continue
		}
		dep, agreeing, ok := readDep(named, r, quorum)
		if !ok {
			g.notFast[r] = true // no superquorum agreed on a dependency
			continue
		}
		d, chosen := g.index[dep]
		if !chosen {
			d = -1
		}
		if dep != (wire.OpID{}) && !chosen && !done(dep) {
			g.notFast[r] = true // its dependency is not held widely enough
			continue
		}
		// With no dependency (the read returned the applied value), or
		// one already logged, every chosen write to the key goes after the
		// read.
		if chosen {
			g.add(d, r, rankReadDep)
		}
		for _, w := range writes[e.Op.Key] {
			if w == d {
				continue
			}
			if chosen {
				c := depChoice{read: r, dep: d, write: w, agreeing: agreeing, quorum: quorum}
				if ahead, n := g.listPlaces(c); ahead > n-quorum {
					// The read cannot have completed before the write was
					// invoked (see choose): no fast-path order from it.
					g.refuted[[2]int{r, w}] = true
				}
				choices = append(choices, c)
			} else {
				g.add(r, w, rankReadDep)
			}
		}
	}
	return choices
}

// depChoice is another write to a read's key, to be ordered before the
// read's dependency or after the read. agreeing marks the lists that name
// the dependency; a superquorum's lists, at least quorum of them, are
// among them if the read completed on the fast path.
type depChoice struct {
	read, dep, write int
	agreeing         []bool
	quorum           int
}

// choose places each such write. If the read completed on the fast path,
// its superquorum's lists hold the write before the dependency or after the
// read (or not at all), and at most the agreeing lists beyond quorum are
// outside that superquorum. If the read must precede the write (it
// completed before the write was invoked), every superquorum list holding
// the write holds it after the read: so more lists with the write before
// the dependency than can be outside rule that out. If the write must
// precede the read, some superquorum list holds it before the read (it
// reached the read's superquorum first through the operations that order
// it before the read), so before the dependency: so none rules that out.
// What the certain orders (sessions' previous weak writes, read
// dependencies) and the choices made before already settle comes first,
// so that choices for two reads do not contradict each other; then the
// order the other orders give (the fast-path orders, which carry the
// required orders of every operation that completed on the fast path),
// where it puts the write outside the read's span; and only where it puts
// it between the dependency and the read, the lists, as above. The orders
// a choice contradicts rank below it and go when cycles are broken.
func (g *orderGraph) choose(choices []depChoice) {
	// The order the other orders give so far: choices are made read by
	// read in it, and it decides where the lists do not.
	at := make([]int, len(g.all))
	for place, i := range g.order() {
		at[i] = place
	}
	slices.SortStableFunc(choices, func(a, b depChoice) int { return cmp.Compare(at[a.read], at[b.read]) })
	certain := g.certainOrders()
	place := func(c depChoice, before bool) {
		if before {
			g.add(c.write, c.dep, rankReadDep)
			certain.add(c.write, c.dep)
		} else {
			g.add(c.read, c.write, rankReadDep)
			certain.add(c.read, c.write)
		}
	}
	// First every choice the certain orders settle, over and over, as each
	// one placed may settle others: the write before the read, or the read
	// or its dependency before the write.
	for settled := true; settled; {
		settled = false
		open := choices[:0]
		for _, c := range choices {
			certain.focus(c.read, c.dep)
			before := certain.toRead.has(c.write)
			after := certain.fromRead.has(c.write) || certain.fromDep.has(c.write)
			switch {
			case before && after:
				// Either place contradicts the certain orders: the read
				// did not complete on the fast path with this dependency.
				settled = true
			case before || after:
				place(c, before)
				settled = true
			default:
				open = append(open, c)
			}
		}
		choices = open
	}
	// Then the rest, read by read, each after what the others placed.
	for _, c := range choices {
		ahead, agreeing := g.listPlaces(c)
		certain.focus(c.read, c.dep)
		var before bool
		switch {
		case certain.toRead.has(c.write):
			before = true
		case certain.fromRead.has(c.write):
		case certain.fromDep.has(c.write):
			if g.reaches(c.write, c.read) {
				// After the read would close a cycle too: the orders
				// drawn put the write before the read, while the certain
				// ones put it after the dependency. So the read did not
				// complete on the fast path with this dependency, and no
				// place is chosen (long-mode seed 7355, CURP-HO, N = 5: a
				// read of another session had completed on the fast path
				// with the write as its dependency before this read's
				// session invoked an operation ahead of it; placed after
				// this read, the write broke that order).
				continue
			}
		case at[c.write] < at[c.dep]:
			before = true
		case at[c.write] > at[c.read]:
		case ahead >= c.quorum:
			before = true
		case ahead > agreeing-c.quorum:
			// Neither place is required: the write was not required
			// before the read (it would then have reached every list of
			// the read's superquorum before the dependency, at least
			// quorum of these), nor after it (then only lists outside
			// the superquorum, agreeing-quorum at most, would hold it
			// ahead).
			// Before the dependency, unless the orders drawn put the
			// write after the dependency: a required order may run that
			// way (long-mode seed 8689, CURP-HO, N = 5: the dependency,
			// a strong operation of its session that completed on the
			// fast path, a write invoked after that, and this write of
			// the same session), and placed before, the write would close
			// a cycle that broke the required order.
			before = !g.reaches(c.dep, c.write)
		}
		place(c, before)
	}
}

// reaches reports whether the orders drawn lead from operation a to b.
func (g *orderGraph) reaches(a, b int) bool {
	after := g.adjacency()
	return reaches(func(n int32) []int32 { return after.of(int(n)) }, int32(a), int32(b))
}

// listPlaces counts the lists that name c's dependency, and those of them
// holding c's write before the dependency.
func (g *orderGraph) listPlaces(c depChoice) (ahead, agreeing int) {
	for l, pos := range g.pos {
		if !c.agreeing[l] {
			continue
		}
		agreeing++
		if w := pos[c.write]; w >= 0 && w < pos[c.dep] {
			ahead++
		}
	}
	return ahead, agreeing
}

// namedDeps returns, for each list and each chosen strong read it holds,
// the read dependency the list names for it, as a witness would: the
// latest weak write to the read's key before it, provided the list holds
// that write's session's earlier weak writes before the read too (or done
// has them); else nothing usable. A list holding a strong write to the key
// before the read names nothing either: its replica refused the read (the
// write was pooled when the read came, and a pooled strong write conflicts
// with it, done or not). A witness never records such a read, but a leader
// pools every operation it logs, refused or not, and its pool is a list
// once it no longer leads. named[l][r] is nil where list l names
// nothing for read r; the zero id stands for no write at all.
func (g *orderGraph) namedDeps(lists [][]witness.Entry, done func(wire.OpID) bool) [][]*wire.OpID {
	named := make([][]*wire.OpID, len(lists))
	for l, list := range lists {
		named[l] = make([]*wire.OpID, len(g.all))
		chains := newListChains(list, done)
		latest := make(map[string]int)
		blocked := make(map[string]bool)
		for i, e := range list {
			if e.Op.Kind.IsWrite() {
				if e.Op.Level == wire.Weak {
					latest[e.Op.Key] = i + 1
				} else {
					blocked[e.Op.Key] = true
				}
				continue
			}
			r, ok := g.index[e.Op.ID]
			if !ok || e.Op.Level != wire.Strong || named[l][r] != nil || blocked[e.Op.Key] {
				continue
			}
			var dep wire.OpID
			if w := latest[e.Op.Key]; w > 0 {
				if !chains.heldBefore(w-1, i) {
					continue
				}
				dep = list[w-1].Op.ID
			}
			named[l][r] = &dep
		}
	}
	return named
}

// readDep returns the write that at least quorum of the lists name as
// read r's dependency (the zero id: none), if there is one, and which
// lists name it.
func readDep(named [][]*wire.OpID, r, quorum int) (wire.OpID, []bool, bool) {
	for _, candidate := range named {
		if candidate[r] == nil {
			continue
		}
		dep := *candidate[r]
		agreeing := make([]bool, len(named))
		n := 0
		for l := range named {
			if d := named[l][r]; d != nil && *d == dep {
				agreeing[l] = true
				n++
			}
		}
		if n >= quorum {
			return dep, agreeing, true
		}
	}
	return wire.OpID{}, nil, false
}

// chainHeld reports whether list holds before position before (or done
// has) every earlier weak write of w's session, following the previous
// weak writes.
func chainHeld(w *witness.Entry, list []witness.Entry, at map[wire.OpID]int, before int, done func(wire.OpID) bool) bool {
	for prev := w.PrevWeak; prev != 0; {
		id := wire.OpID{Session: w.Op.ID.Session, Seq: prev}
		if done(id) {
			return true
		}
		i, ok := at[id]
		if !ok || i >= before {
			return false
		}
		prev = list[i].PrevWeak
	}
	return true
}

// breakCycles keeps, inside each strongly connected set of operations, the
// orders strongest first, each unless it closes a cycle with those kept.
// Orders between such sets never close one.
func (g *orderGraph) breakCycles() {
	comp := g.components()
	var inner []orderEdge
	kept := g.edges[:0]
	for _, e := range g.edges {
		if comp[e.from] == comp[e.to] {
			inner = append(inner, e)
		} else {
			kept = append(kept, e)
		}
	}
	g.edges = kept
	if len(inner) == 0 {
		return
	}
	slices.SortStableFunc(inner, func(a, b orderEdge) int { return cmp.Compare(a.rank, b.rank) })
	after := make(map[int32][]int32)
	for _, e := range inner {
		if !reaches(func(n int32) []int32 { return after[n] }, e.to, e.from) {
			after[e.from] = append(after[e.from], e.to)
			g.edges = append(g.edges, e)
		}
	}
}

// reaches reports whether following next leads from one operation to
// another.
func reaches(next func(int32) []int32, from, to int32) bool {
	seen := map[int32]bool{from: true}
	stack := []int32{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == to {
			return true
		}
		for _, m := range next(n) {
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return false
}

// adjacency is the orders drawn as lists of successors, in one array:
// the successors of i are next[start[i]:start[i+1]].
type adjacency struct{ start, next []int32 }

func (g *orderGraph) adjacency() adjacency {
	a := adjacency{start: make([]int32, len(g.all)+1), next: make([]int32, len(g.edges))}
	for _, e := range g.edges {
		a.start[e.from+1]++
	}
	for i := range len(g.all) {
		a.start[i+1] += a.start[i]
	}
	fill := slices.Clone(a.start[:len(g.all)])
	for _, e := range g.edges {
		a.next[fill[e.from]] = e.to
		fill[e.from]++
	}
	return a
}

func (a adjacency) of(i int) []int32 { return a.next[a.start[i]:a.start[i+1]] }

// components numbers the strongly connected components of the orders drawn
// (Tarjan's algorithm, without recursion).
func (g *orderGraph) components() []int {
	n := len(g.all)
	after := g.adjacency()
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
			if succ := after.of(v); top.next < len(succ) {
				w := int(succ[top.next])
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
	out := make([]witness.Entry, 0, len(g.all))
	for _, i := range g.order() {
		out = append(out, g.all[i])
	}
	return out
}

// order is sort's order, as operation numbers.
func (g *orderGraph) order() []int {
	after := g.adjacency()
	before := make([]int, len(g.all))
	for _, e := range g.edges {
		before[e.to]++
	}
	ready := &intHeap{}
	for i, n := range before {
		if n == 0 {
			heap.Push(ready, i)
		}
	}
	out := make([]int, 0, len(g.all))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		out = append(out, i)
		for _, n := range after.of(i) {
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
