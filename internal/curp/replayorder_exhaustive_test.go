package curp

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

var (
	exhaustiveHistories = flag.Int("replay-histories", 60, "histories TestReplayOrderExhaustive draws, each with every pool state")
	long                = flag.Bool("long", false, "draw thousands of histories in TestReplayOrderExhaustive")
	exhaustiveFrom      = flag.Int("replay-from", 0, "first history TestReplayOrderExhaustive checks (earlier ones are drawn and skipped)")
)

// The exhaustive check of the replay order models a recovery at N = 5,
// f = 2: the old leader and one witness crashed, and the new leader
// recovers from the other three witnesses' pools (threshold 2; at most
// one of them is outside any fast-path operation's superquorum of four).
// For a small history (four operations across two or three sessions, each
// a strong write, a strong read or a weak write on one of two keys, the
// strong ones either completed on the fast path or still in flight), it
// enumerates every way the three pools can hold the history — every
// subset of the operations, in every order, for each witness — keeps the
// states consistent with what completed, replays each with replayOrder and
// checks the replay against what the history requires.
//
// Consistent means: a witness records a strong operation only if no
// strong write on its key is pooled before it; and each fast-path
// operation X is held by at least two of the three pools in a way a member
// of its superquorum could hold it — X recorded before any operation
// invoked after X completed reached the witness, after every earlier weak
// write of its session (the client's write set), and, for a read, with the
// same latest weak write on the key before it (its read dependency) in all
// of them.
//
// The replay must keep: every fast-path operation; each fast-path read's
// value (the last write to its key before it is its read dependency); and
// an order equivalent to one that extends what the history requires — a
// session's order (an operation completed before its session's next was
// invoked), the real-time order of strong operations (a fast-path one
// completed before another was invoked), each operation after its
// session's previous weak write, and each fast-path read after its read
// dependency. Equivalent means the same order on every two operations
// that conflict (same key, one a write); operations the replay left out
// or held back for an unreplayed previous weak write are appended, as
// their clients' retries would be.
type xop struct {
	e    witness.Entry
	fast bool // a strong operation that completed on the fast path
	// inv and comp are event times; comp is -1 while in flight.
	inv, comp int
}

func (o xop) strong() bool { return o.e.Op.Level == wire.Strong }
func (o xop) write() bool  { return o.e.Op.Kind.IsWrite() }
func (o xop) String() string {
	kind := map[bool]string{true: "w", false: "r"}[o.write()]
	level := map[bool]string{true: "S", false: "W"}[o.strong()]
	state := "in flight"
	if o.comp >= 0 {
		state = fmt.Sprintf("completed at %d", o.comp)
		if o.fast {
			state += " (fast path)"
		}
	}
	return fmt.Sprintf("%s %s%s key %s, invoked at %d, %s", o.e.Op.ID, level, kind, o.e.Op.Key, o.inv, state)
}

type xhistory []xop

func (h xhistory) String() string {
	var b strings.Builder
	for _, o := range h {
		b.WriteString("  " + o.String() + "\n")
	}
	return b.String()
}

// drawHistory draws four operations across two or three sessions and
// their invocation and completion times.
func drawHistory(rng *rand.Rand) xhistory {
	const n = 4
	sessions := 2 + rng.IntN(2)
	h := make(xhistory, n)
	seqs := make(map[uint64]uint64)
	prevWeak := make(map[uint64]uint64)
	// Events: each operation is invoked, and completes unless it is a
	// strong one left in flight; a session invokes in sequence order.
	type ev struct {
		op  int
		end bool
	}
	var order []ev
	for i := range h {
		s := uint64(1 + rng.IntN(sessions))
		seqs[s]++
		o := wire.Op{ID: wire.OpID{Session: s, Seq: seqs[s]}, Key: strconv.Itoa(rng.IntN(2))}
		switch rng.IntN(3) {
		case 0:
			o.Level, o.Kind = wire.Strong, wire.Put
		case 1:
			o.Level, o.Kind = wire.Strong, wire.Get
		default:
			o.Level, o.Kind = wire.Weak, wire.Put
		}
		h[i] = xop{e: witness.Entry{Op: o, PrevWeak: prevWeak[s]}, comp: -1}
		if o.Level == wire.Weak {
			prevWeak[s] = o.ID.Seq
		} else {
			h[i].fast = rng.IntN(4) != 0
		}
		order = append(order, ev{op: i})
	}
	// Invocations of different sessions interleave at random; each
	// session's go in sequence order. Then each completion goes at a
	// random place after its invocation.
	rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	bySession := make(map[uint64][]int)
	for _, e := range order {
		s := h[e.op].e.Op.ID.Session
		bySession[s] = append(bySession[s], e.op)
	}
	for s, ops := range bySession {
		slices.SortFunc(ops, func(a, b int) int { return int(h[a].e.Op.ID.Seq) - int(h[b].e.Op.ID.Seq) })
		bySession[s] = ops
	}
	for i, e := range order {
		s := h[e.op].e.Op.ID.Session
		order[i].op, bySession[s] = bySession[s][0], bySession[s][1:]
	}
	for i := range h {
		if h[i].strong() && !h[i].fast {
			continue
		}
		at := slices.IndexFunc(order, func(e ev) bool { return e.op == i && !e.end })
		pos := at + 1 + rng.IntN(len(order)-at)
		order = slices.Insert(order, pos, ev{op: i, end: true})
	}
	for t, e := range order {
		if e.end {
			h[e.op].comp = t
		} else {
			h[e.op].inv = t
		}
	}
	return h
}

// requires reports the orders the history requires outside read
// dependencies: session order, strong real-time order, previous weak
// writes.
func (h xhistory) requires() [][]bool {
	n := len(h)
	req := make([][]bool, n)
	for a := range req {
		req[a] = make([]bool, n)
		for b := range h {
			if a == b {
				continue
			}
			oa, ob := h[a], h[b]
			sameSession := oa.e.Op.ID.Session == ob.e.Op.ID.Session
			completedFirst := oa.comp >= 0 && oa.comp < ob.inv
			switch {
			case sameSession && completedFirst:
				req[a][b] = true
			case oa.strong() && ob.strong() && oa.fast && completedFirst:
				req[a][b] = true
			case sameSession && ob.e.PrevWeak == oa.e.Op.ID.Seq:
				req[a][b] = true
			}
		}
	}
	return req
}

// arrangement is one witness's pool: operations (indexes into the
// history) in the order it recorded them.
type arrangement []int

// arrangements lists every valid pool of h: every subset in every order in
// which no strong operation follows a pooled strong write on its key.
func (h xhistory) arrangements() []arrangement {
	var out []arrangement
	var rec func(cur arrangement, used int)
	rec = func(cur arrangement, used int) {
		out = append(out, slices.Clone(cur))
		for i := range h {
			if used&(1<<i) != 0 || !h.canRecord(cur, i) {
				continue
			}
			rec(append(cur, i), used|1<<i)
		}
	}
	rec(nil, 0)
	return out
}

func (h xhistory) canRecord(pool arrangement, i int) bool {
	if !h[i].strong() {
		return true
	}
	for _, j := range pool {
		if h[j].strong() && h[j].write() && h[j].e.Op.Key == h[i].e.Op.Key {
			return false
		}
	}
	return true
}

// superquorumView reports whether a pool could belong to fast-path
// operation x's superquorum, and x's read dependency there (-1: none).
func (h xhistory) superquorumView(pool arrangement, x int) (ok bool, dep int) {
	at := slices.Index(pool, x)
	if at < 0 {
		return false, -1
	}
	dep = -1
	for _, j := range pool[:at] {
		if h[j].inv > h[x].comp {
			return false, -1
		}
		if !h[j].strong() && h[j].e.Op.Key == h[x].e.Op.Key {
			dep = j
		}
	}
	if !h.earlierWeakWritesBefore(pool[:at], x) {
		return false, -1 // the client's write set
	}
	if dep >= 0 && !h.earlierWeakWritesBefore(pool[:at], dep) {
		return false, -1 // a witness names a read dependency only with its session's earlier writes
	}
	if dep >= 0 && !h[x].write() && h.loggedAfter(dep, x) {
		return false, -1 // the leader's dependency cannot be dep
	}
	return true, dep
}

// loggedAfter reports whether the leader, which logs read x after its
// session's earlier weak writes and each weak write after its session's
// previous one, must have logged a write to x's key after dep and before
// x: an earlier weak write of x's session on the key that dep precedes in
// its session.
func (h xhistory) loggedAfter(dep, x int) bool {
	d, r := h[dep].e.Op, h[x].e.Op
	for _, o := range h {
		id := o.e.Op.ID
		if o.strong() || id.Session != r.ID.Session || id.Seq >= r.ID.Seq || o.e.Op.Key != r.Key || id == d.ID {
			continue
		}
		if id.Session == d.ID.Session && d.ID.Seq < id.Seq {
			return true
		}
	}
	return false
}

// earlierWeakWritesBefore reports whether prefix holds every weak write of
// x's session before x.
func (h xhistory) earlierWeakWritesBefore(prefix arrangement, x int) bool {
	for j, o := range h {
		sameSession := o.e.Op.ID.Session == h[x].e.Op.ID.Session
		if sameSession && !o.strong() && o.e.Op.ID.Seq < h[x].e.Op.ID.Seq && !slices.Contains(prefix, j) {
			return false
		}
	}
	return true
}

// consistent reports whether three pools can hold h, and each fast-path
// read's dependency (-1: none).
func (h xhistory) consistent(pools [3]arrangement) (deps map[int]int, ok bool) {
	deps = make(map[int]int)
	for x, o := range h {
		if !o.fast {
			continue
		}
		votes := make(map[int]int)
		for _, p := range pools {
			if in, dep := h.superquorumView(p, x); in {
				if o.write() {
					dep = -1
				}
				votes[dep]++
			}
		}
		found := false
		for dep, n := range votes {
			if n >= 2 {
				deps[x], found = dep, true
			}
		}
		if !found {
			return nil, false
		}
	}
	return deps, true
}

// violation checks one replay of h from pools; it returns what the replay
// broke, or "".
func (h xhistory) violation(pools [3]arrangement, deps map[int]int, replay []witness.Entry) string {
	index := make(map[wire.OpID]int, len(h))
	for i, o := range h {
		index[o.e.Op.ID] = i
	}
	var replayed []int
	for _, e := range replay {
		replayed = append(replayed, index[e.Op.ID])
	}
	for x, o := range h {
		if o.fast && !slices.Contains(replayed, x) {
			return fmt.Sprintf("fast-path operation %s left out", o.e.Op.ID)
		}
	}
	// What the replay held back (its previous weak write not replayed)
	// and what it left out are logged after it, as retries.
	final := heldBack(h, replayed)
	for x, o := range h {
		if !o.fast || o.write() {
			continue
		}
		at := slices.Index(final, x)
		last := -1
		for _, j := range final[:at] {
			if h[j].write() && h[j].e.Op.Key == o.e.Op.Key {
				last = j
			}
		}
		if last != deps[x] {
			return fmt.Sprintf("fast-path read %s returned %s but the replay gives it %s", o.e.Op.ID, name(h, deps[x]), name(h, last))
		}
	}
	req := h.requires()
	for x, d := range deps {
		if d >= 0 {
			req[d][x] = true
		}
	}
	closure(req)
	// Required orders plus the replay's order on conflicting pairs must
	// leave no cycle.
	n := len(h)
	edge := make([][]bool, n)
	for a := range edge {
		edge[a] = slices.Clone(req[a])
	}
	for i, a := range final {
		for _, b := range final[i+1:] {
			if h[a].e.Op.Conflicts(&h[b].e.Op) {
				edge[a][b] = true
			}
		}
	}
	closure(edge)
	for a := range n {
		if edge[a][a] {
			return fmt.Sprintf("the replay %v orders conflicting operations against what the history requires (around %s)", names(h, final), h[a].e.Op.ID)
		}
	}
	return ""
}

// heldBack turns the replay into the log it makes: an operation whose
// previous weak write was not replayed waits for it, and everything not
// replayed follows, in each session's order.
func heldBack(h xhistory, replayed []int) []int {
	in := func(i int) bool { return slices.Contains(replayed, i) }
	prev := func(i int) int {
		for j, o := range h {
			if o.e.Op.ID.Session == h[i].e.Op.ID.Session && o.e.Op.ID.Seq == h[i].e.PrevWeak {
				return j
			}
		}
		return -1
	}
	var final, rest []int
	waiting := func(i int) bool {
		for p := prev(i); p >= 0; p = prev(p) {
			if !in(p) {
				return true
			}
		}
		return false
	}
	for _, i := range replayed {
		if waiting(i) {
			rest = append(rest, i)
		} else {
			final = append(final, i)
		}
	}
	for i := range h {
		if !in(i) {
			rest = append(rest, i)
		}
	}
	slices.SortStableFunc(rest, func(a, b int) int {
		ia, ib := h[a].e.Op.ID, h[b].e.Op.ID
		if ia.Session != ib.Session {
			return int(ia.Session) - int(ib.Session)
		}
		return int(ia.Seq) - int(ib.Seq)
	})
	return append(final, rest...)
}

func closure(m [][]bool) {
	n := len(m)
	for k := range n {
		for i := range n {
			if !m[i][k] {
				continue
			}
			for j := range n {
				if m[k][j] {
					m[i][j] = true
				}
			}
		}
	}
}

func name(h xhistory, i int) string {
	if i < 0 {
		return "the applied value"
	}
	return h[i].e.Op.ID.String()
}

func names(h xhistory, order []int) []string {
	var out []string
	for _, i := range order {
		out = append(out, h[i].e.Op.ID.String())
	}
	return out
}

func entriesOf(h xhistory, p arrangement) []witness.Entry {
	out := make([]witness.Entry, len(p))
	for i, j := range p {
		out[i] = h[j].e
	}
	return out
}

// exhaust replays every consistent pool state of h and returns how many
// states it checked and the first violation found.
func exhaust(h xhistory, order replayFunc) (states int, failure string) {
	arr := h.arrangements()
	for _, a := range arr {
		for _, b := range arr {
			for _, c := range arr {
				pools := [3]arrangement{a, b, c}
				deps, ok := h.consistent(pools)
				if !ok {
					continue
				}
				states++
				lists := [][]witness.Entry{entriesOf(h, a), entriesOf(h, b), entriesOf(h, c)}
				replay := order(lists)
				if v := h.violation(pools, deps, replay); v != "" {
					return states, fmt.Sprintf("%s\npools:\n  %v\n  %v\n  %v", v, names(h, a), names(h, b), names(h, c))
				}
			}
		}
	}
	return states, ""
}

// replayFunc orders a replay from three witnesses' lists at f = 2.
type replayFunc func(lists [][]witness.Entry) []witness.Entry

func replayAtF2(lists [][]witness.Entry) []witness.Entry {
	return replayOrder(lists, func(wire.OpID) bool { return false }, 2, 1)
}

func voteAtF2(lists [][]witness.Entry) []witness.Entry { return voteOrder(lists, 2) }

// tieHistory is the shape the review found (see TestReplayKeepsFastPathsBeforeLaterOperations):
// session 1's strong write on key 0 completes on the fast path; session 2
// then writes key 1 strongly and key 0 weakly, and reads key 0 strongly.
func tieHistory() xhistory {
	op := func(s, seq uint64, level wire.Level, kind wire.OpKind, key string, prev uint64) witness.Entry {
		return witness.Entry{Op: wire.Op{ID: wire.OpID{Session: s, Seq: seq}, Level: level, Kind: kind, Key: key}, PrevWeak: prev}
	}
	return xhistory{
		{e: op(1, 1, wire.Strong, wire.Put, "0", 0), fast: true, inv: 0, comp: 1},
		{e: op(2, 1, wire.Strong, wire.Put, "1", 0), fast: true, inv: 2, comp: 3},
		{e: op(2, 2, wire.Weak, wire.Put, "0", 0), inv: 4, comp: 5},
		{e: op(2, 3, wire.Strong, wire.Get, "0", 2), inv: 6, comp: -1},
	}
}

// TestReplayOrderExhaustive checks the replay order on every consistent
// pool state of the review's history and of histories drawn from a fixed
// seed (-replay-histories of them; -long draws 2,000).
func TestReplayOrderExhaustive(t *testing.T) {
	histories := *exhaustiveHistories
	if testing.Short() || raceDetector {
		histories = min(histories, 4)
	}
	if *long {
		histories = 2000
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(29, 5))
	total := 0
	for i := range histories + 1 {
		h := tieHistory()
		if i > 0 {
			h = drawHistory(rng)
		}
		if i < *exhaustiveFrom {
			continue
		}
		states, failure := exhaust(h, replayAtF2)
		total += states
		if failure != "" {
			t.Fatalf("history %d:\n%s%s", i, h, failure)
		}
	}
	t.Logf("%d histories, %d consistent pool states replayed, all safe, in %v", histories+1, total, time.Since(start).Round(time.Millisecond))
}

// TestVoteOrderFailsExhaustiveCheck: the order recoveries drew before, by
// the witnesses' votes with ties to the first witness, fails the check on
// the review's history.
func TestVoteOrderFailsExhaustiveCheck(t *testing.T) {
	states, failure := exhaust(tieHistory(), voteAtF2)
	if failure == "" {
		t.Fatalf("%d pool states of the review's history replayed safely by votes", states)
	}
	t.Logf("caught after %d pool states: %s", states, failure)
}
