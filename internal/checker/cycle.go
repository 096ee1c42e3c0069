package checker

import (
	"cmp"
	"fmt"
	"slices"
)

// checkCycles reports future reads: reads that returned a value before the
// put that wrote it was invoked. Every causal edge except such a read's
// points forward in time, so a cycle in causal order (CyclicCO) needs at
// least one of them; when there is any, the causal graph is built and its
// strongly connected components found. A future read on a cycle is
// reported as CyclicCO (W5), any other as a value read before it was
// written (W6).
//
// The graph stays linear in size: instead of an edge from every op to
// every later op of its session, each session has a chain of nodes, one
// per op in return order, that the op feeds and later ops hang from; the
// strong ops share one more chain for real-time order. A group of writes
// that take effect together (a transaction's branch) has a node that each
// feeds and that every read of one of them hangs from; so do a
// transaction's reads, which read one state, the writes they read.
func checkCycles(h *hist, rep *reporter) {
	var future []int32
	for i := range h.ops {
		if h.ops[i].future {
			future = append(future, int32(i))
		}
	}
	if len(future) == 0 {
		return
	}
	g := causalGraph(h)
	comp := g.components()
	cycles := map[int32][]int32{}
	for _, r := range future {
		o := &h.ops[r]
		if comp[r] == comp[o.rf] {
			cycles[comp[r]] = append(cycles[comp[r]], r)
			continue
		}
		w := h.name(o.rf)
		rep.add(Violation{Property: "W6", Ops: h.report(r, o.rf),
			Detail: fmt.Sprintf("FutureRead: %v returned %v's value before %v was invoked", h.name(r), w, w)})
	}
	for c := range cycles {
		rep.add(cycleViolation(h, comp, c))
	}
}

func cycleViolation(h *hist, comp []int32, c int32) Violation {
	const show = 12
	var members []int32
	for i := range h.ops {
		if comp[i] == c {
			members = append(members, int32(i))
		}
	}
	slices.SortFunc(members, func(a, b int32) int { return cmp.Compare(h.ops[a].inv, h.ops[b].inv) })
	return Violation{Property: "W5", Ops: h.report(members[:min(show, len(members))]...),
		Detail: fmt.Sprintf("CyclicCO: %d operations are causally before themselves (session order and reads-from form a cycle)", len(members))}
}

// graph is a directed graph in adjacency-list form.
type graph struct {
	adj [][]int32
}

func (g *graph) node() int32 {
	g.adj = append(g.adj, nil)
	return int32(len(g.adj) - 1)
}

func (g *graph) edge(a, b int32) { g.adj[a] = append(g.adj[a], b) }

// causalGraph has one node per op (same index) plus the chain nodes.
func causalGraph(h *hist) *graph {
	g := &graph{adj: make([][]int32, len(h.ops))}
	groups := make([]int32, len(h.groups))
	for k, gr := range h.groups {
		groups[k] = g.node()
		for _, m := range gr.members {
			g.edge(m, groups[k])
		}
	}
	for _, ms := range h.snaps {
		n := g.node()
		for _, m := range ms {
			if rf := h.ops[m].rf; rf >= 0 {
				g.edge(rf, n)
			}
			g.edge(n, m)
		}
	}
	done := make([][]int32, h.sessions) // ops with a result, per session
	all := make([][]int32, h.sessions)
	var strongDone, strongAll []int32
	for i := range h.ops {
		o := &h.ops[i]
		all[o.sess] = append(all[o.sess], int32(i))
		if o.strong {
			strongAll = append(strongAll, int32(i))
		}
		if o.ok {
			done[o.sess] = append(done[o.sess], int32(i))
			if o.strong {
				strongDone = append(strongDone, int32(i))
			}
		}
		if !o.write && o.rf >= 0 {
			g.edge(o.rf, int32(i))
			if gr := h.grp(o.rf); gr >= 0 {
				g.edge(groups[gr], int32(i))
			}
		}
	}
	// chain links every op of members to the ops of done that returned
	// before it was invoked.
	chain := func(done, members []int32) {
		slices.SortFunc(done, func(a, b int32) int { return cmp.Compare(h.ops[a].ret, h.ops[b].ret) })
		nodes := make([]int32, len(done))
		for p, x := range done {
			nodes[p] = g.node()
			g.edge(x, nodes[p])
			if p > 0 {
				g.edge(nodes[p-1], nodes[p])
			}
		}
		for _, m := range members {
			k, _ := slices.BinarySearchFunc(done, h.ops[m].inv, func(x int32, t int64) int { return cmp.Compare(h.ops[x].ret, t) })
			if k > 0 {
				g.edge(nodes[k-1], m)
			}
		}
	}
	for s := range all {
		chain(done[s], all[s])
	}
	chain(strongDone, strongAll)
	return g
}

// components labels strongly connected components (Tarjan's algorithm,
// iterative so that long chains cannot overflow the stack).
func (g *graph) components() []int32 {
	n := len(g.adj)
	index, low, comp := make([]int32, n), make([]int32, n), make([]int32, n)
	for i := range index {
		index[i] = -1
	}
	onStack := make([]bool, n)
	var stack []int32
	type frame struct{ v, next int32 }
	var calls []frame
	next, ncomp := int32(0), int32(0)
	for root := range int32(n) {
		if index[root] >= 0 {
			continue
		}
		calls = append(calls, frame{root, 0})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if int(f.next) < len(g.adj[f.v]) {
				w := g.adj[f.v][f.next]
				f.next++
				switch {
				case index[w] < 0:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{w, 0})
				case onStack[w]:
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				p := calls[len(calls)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp
}
