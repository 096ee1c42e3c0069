package curp

// certainOrders holds the orders drawn of rank up to rankReadDep, for
// choose, and answers its questions about one read at a time: does a write
// reach the read, do the read or its dependency reach the write. choose
// asks them for every other write to the read's key, and a search per
// question cost the whole graph each time: a pool left by a leaderless
// spell at 99 % weak (20,000 records, a hot key written a thousand times
// and read a hundred) took seconds to order. Instead the three sets are
// searched once per read and extended as orders are added, each
// operation joining a set at most once.
type certainOrders struct {
	after, before [][]int32
	read, dep     int
	// fromRead and fromDep are what the read and its dependency reach,
	// toRead what reaches the read.
	fromRead, fromDep, toRead reachSet
	stack                     []int32
}

// reachSet marks the operations joined to one: those it reaches, or
// those that reach it.
type reachSet struct {
	mark  []uint32
	stamp uint32
}

func (s *reachSet) has(x int) bool { return s.mark[x] == s.stamp }

func (g *orderGraph) certainOrders() *certainOrders {
	n := len(g.all)
	c := &certainOrders{after: make([][]int32, n), before: make([][]int32, n), read: -1, dep: -1}
	for _, s := range []*reachSet{&c.fromRead, &c.fromDep, &c.toRead} {
		s.mark = make([]uint32, n)
	}
	for _, e := range g.edges {
		if e.rank <= rankReadDep {
			c.after[e.from] = append(c.after[e.from], e.to)
			c.before[e.to] = append(c.before[e.to], e.from)
		}
	}
	return c
}

// focus makes the sets those of read and its dependency dep.
func (c *certainOrders) focus(read, dep int) {
	if read == c.read && dep == c.dep {
		return
	}
	c.read, c.dep = read, dep
	c.search(&c.fromRead, read, c.after, true)
	c.search(&c.fromDep, dep, c.after, true)
	c.search(&c.toRead, read, c.before, true)
}

// add draws the order from → to and extends the sets it joins.
func (c *certainOrders) add(from, to int) {
	c.after[from] = append(c.after[from], int32(to))
	c.before[to] = append(c.before[to], int32(from))
	if c.read < 0 {
		return
	}
	for _, s := range []*reachSet{&c.fromRead, &c.fromDep} {
		if s.has(from) && !s.has(to) {
			c.search(s, to, c.after, false)
		}
	}
	if c.toRead.has(to) && !c.toRead.has(from) {
		c.search(&c.toRead, from, c.before, false)
	}
}

// search marks in s every operation next leads to from x, x included,
// starting s afresh if fresh.
func (c *certainOrders) search(s *reachSet, x int, next [][]int32, fresh bool) {
	if fresh {
		s.stamp++
		if s.stamp == 0 { // wrapped: no mark may look current
			clear(s.mark)
			s.stamp = 1
		}
	}
	s.mark[x] = s.stamp
	c.stack = append(c.stack[:0], int32(x))
	for len(c.stack) > 0 {
		n := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		for _, m := range next[n] {
			if s.mark[m] != s.stamp {
				s.mark[m] = s.stamp
				c.stack = append(c.stack, m)
			}
		}
	}
}
