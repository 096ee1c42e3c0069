package curp

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// entries lists one operation of each of the sessions named, so that
// only arrival order relates them.
func entries(sessions ...uint64) []witness.Entry {
	var es []witness.Entry
	for _, s := range sessions {
		es = append(es, witness.Entry{Op: wire.Op{ID: wire.OpID{Session: s, Seq: 1}}})
	}
	return es
}

func sessionsOf(es []witness.Entry) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, e.Op.ID.Session)
	}
	return out
}

// ops lists the entries given, as in ops(op(2, 17), after(op(2, 20), 17)).
func ops(es ...witness.Entry) []witness.Entry { return es }

// op is operation session.seq with no previous weak write.
func op(session, seq uint64) witness.Entry {
	return witness.Entry{Op: wire.Op{ID: wire.OpID{Session: session, Seq: seq}}}
}

// after names e's previous weak write in its session.
func after(e witness.Entry, prevWeak uint64) witness.Entry {
	e.PrevWeak = prevWeak
	return e
}

func id(session, seq uint64) wire.OpID { return wire.OpID{Session: session, Seq: seq} }

func ids(es []witness.Entry) []wire.OpID {
	var out []wire.OpID
	for _, e := range es {
		out = append(out, e.Op.ID)
	}
	return out
}

func TestReplayOrder(t *testing.T) {
	tests := []struct {
		name      string
		lists     [][]witness.Entry
		threshold int
		want      []uint64
	}{
		{"below the threshold is left out", [][]witness.Entry{entries(1, 2), entries(2)}, 2, []uint64{2}},
		// The first witness never saw 5; its first record is 9. Every
		// witness that saw both recorded 5 before 9.
		{"a later first appearance still goes first if recorded first",
			[][]witness.Entry{entries(9), entries(5, 9), entries(5, 9)}, 2, []uint64{5, 9}},
		// The one list holding 1 lacks 3, and the lists holding 3 hold it
		// ahead of all else they hold: 3 may have completed on the fast
		// path before 1 was invoked, so 1 goes after it.
		{"a strong operation goes before what at most late lists saw first", [][]witness.Entry{entries(3, 4), entries(2, 3), entries(1, 2)}, 1, []uint64{2, 3, 4, 1}},
		{"a tie: the first witness decides", [][]witness.Entry{entries(1, 2), entries(2, 1)}, 2, []uint64{1, 2}},
		{"the majority of witnesses decides", [][]witness.Entry{entries(2, 1), entries(1, 2), entries(1, 2)}, 2, []uint64{1, 2}},
		// A witness that received 1 late sees 2 3 1; the others saw 1 2 3.
		{"a witness that saw one late is outvoted",
			[][]witness.Entry{entries(2, 3, 1), entries(1, 2, 3), entries(1, 2, 3)}, 2, []uint64{1, 2, 3}},
		// 1 2, 2 3, 3 1 once each: the orders taken first (1 2, then 2 3)
		// stand and the one that would close the cycle is dropped.
		{"a cycle of equal votes drops the order seen last", [][]witness.Entry{entries(1, 2), entries(2, 3), entries(3, 1)}, 1, []uint64{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, sessionsOf(replayOrder(tt.lists, notDone, tt.threshold, (len(tt.lists)-1)/2)))
		})
	}
}

// An operation replays after its session's previous weak write, whatever
// order the witnesses saw them in: a hybrid protocol holds an operation back
// until that write is logged, so one replayed early would be held while
// other operations, some invoked after it completed, overtook it. Other
// operations of a session are ordered by the witnesses' votes, like any.
func TestReplayOrderFollowsPreviousWeakWrites(t *testing.T) {
	tests := []struct {
		name      string
		lists     [][]witness.Entry
		threshold int
		want      []wire.OpID
	}{
		{"against every witness", [][]witness.Entry{ops(after(op(2, 20), 17), op(2, 17)), ops(after(op(2, 20), 17), op(2, 17))}, 2,
			[]wire.OpID{id(2, 17), id(2, 20)}},
		// The shape of a replay the checked simulation found (CURP-HO, N = 5,
		// seed 1374): session 2's weak write 17 arrived late; 1.16 was
		// invoked after 2.23 completed and must follow it.
		{"a weak write seen late still precedes what followed it",
			[][]witness.Entry{
				ops(after(op(2, 19), 17), after(op(2, 20), 17), after(op(2, 21), 20), op(2, 17), after(op(2, 23), 21), op(1, 16)),
				ops(after(op(2, 19), 17), after(op(2, 20), 17), op(2, 17), after(op(2, 21), 20), after(op(2, 23), 21), op(1, 16)),
			}, 2,
			[]wire.OpID{id(2, 17), id(2, 19), id(2, 20), id(2, 21), id(2, 23), id(1, 16)}},
		// The shape of seed 2640 (CURP-HO, N = 5): session 3 had strong 12
		// and 13 in flight together; 12 reached every witness late, after
		// 13 completed and session 2 went on.
		{"operations in flight together are ordered by the witnesses",
			[][]witness.Entry{
				ops(after(op(3, 13), 6), op(2, 13), op(2, 16), after(op(2, 17), 16), after(op(3, 12), 6)),
				ops(after(op(3, 13), 6), op(2, 13), op(2, 16), after(op(2, 17), 16), after(op(3, 12), 6)),
			}, 2,
			[]wire.OpID{id(3, 13), id(2, 13), id(2, 16), id(2, 17), id(3, 12)}},
		// 1.1 -> 1.2 (previous weak write). 2.1 is in every list and
		// ahead of 1.1 in the one holding both: it may have completed on
		// the fast path before 1.1 was invoked. 1.2 -> 2.1 has one list
		// against it (the one lacking 1.2): the weaker order goes, since it
		// would close a cycle.
		{"the previous weak write outranks a fast-path order that contradicts it",
			[][]witness.Entry{ops(after(op(1, 2), 1), op(2, 1)), ops(after(op(1, 2), 1), op(2, 1)), ops(op(2, 1), op(1, 1))}, 1,
			[]wire.OpID{id(2, 1), id(1, 1), id(1, 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, ids(replayOrder(tt.lists, notDone, tt.threshold, (len(tt.lists)-1)/2)))
		})
	}
}

// BenchmarkReplayOrder orders a large recovery: 2,000 operations of 200
// sessions, as three witnesses saw them, each with some records late.
func BenchmarkReplayOrder(b *testing.B) {
	const n, witnesses = 2000, 3
	lists := make([][]witness.Entry, witnesses)
	for w := range lists {
		for i := range n {
			e := op(uint64(i%200+1), uint64(i/200+1))
			if i/200 > 0 && i%3 == 0 {
				e = after(e, uint64(i/200))
			}
			lists[w] = append(lists[w], e)
		}
		receiveLate(lists[w], w)
	}
	for b.Loop() {
		replayOrder(lists, notDone, 2, 1)
	}
}

// receiveLate has witness w receive every 50th record, from the w-th,
// 40 records late: each witness at different places.
func receiveLate(list []witness.Entry, w int) {
	for i := w; i+40 < len(list); i += 50 {
		late := list[i]
		copy(list[i:i+40], list[i+1:i+41])
		list[i+40] = late
	}
}

func notDone(wire.OpID) bool { return false }

// BenchmarkReplayOrderWeakHeavy orders the recovery of a pool a leaderless
// spell of weak-heavy load leaves: 10,000 operations of 300 sessions, one
// in a hundred strong, each session's weak writes chained, as three
// witnesses saw them with some records late.
func BenchmarkReplayOrderWeakHeavy(b *testing.B) {
	const n, sessions, witnesses = 10000, 300, 3
	lists := make([][]witness.Entry, witnesses)
	for w := range lists {
		prev := make(map[uint64]uint64)
		for i := range n {
			s, seq := uint64(i%sessions+1), uint64(i/sessions+1)
			e := after(op(s, seq), prev[s])
			e.Op.Key = strconv.Itoa(i % 997)
			if i%100 == 0 {
				e.Op.Kind = wire.Get
			} else {
				e.Op.Level, e.Op.Kind = wire.Weak, wire.Put
				prev[s] = seq
			}
			lists[w] = append(lists[w], e)
		}
		receiveLate(lists[w], w)
	}
	for b.Loop() {
		replayOrder(lists, notDone, 2, 1)
	}
}

// A list holding a strong write before a strong read on its key comes from
// a replica that refused the read: a former leader's pool holds every
// operation it logged, refused or not. The shape of seed 1055 (CURP,
// N = 3): put 10001.9 completed on the fast path in term 3; get 30002.12,
// invoked after it, was logged behind it by two leaders (refused, the put
// pending), and the pools of those two replicas recovered term 8. Taken
// for a fast-path read that named no dependency, the get went before the
// put and returned the value the put had overwritten.
func TestReplayOrderKeepsAWriteBeforeAReadItsListsRefused(t *testing.T) {
	put := witness.Entry{Op: wire.Op{ID: id(0x10001, 9), Kind: wire.Put, Key: "4", Value: []byte("x")}}
	get := witness.Entry{Op: wire.Op{ID: id(0x30002, 12), Kind: wire.Get, Key: "4"}}
	lists := [][]witness.Entry{ops(put, get), ops(put, get)}
	require.Equal(t, []wire.OpID{put.Op.ID, get.Op.ID}, ids(replayOrder(lists, notDone, 2, 0)))
	// With f = 2 and one list outside the put's superquorum.
	lists = [][]witness.Entry{ops(put, get), ops(put, get), ops(get)}
	require.Equal(t, []wire.OpID{put.Op.ID, get.Op.ID}, ids(replayOrder(lists, notDone, 2, 1)))
}

// TestReplayOrderWalksEachChainOnce: ordering a pool of one session's
// weak writes, each naming the one before as its previous weak write,
// looks up each link of the chain a bounded number of times per list.
// Walked anew for every entry, a chain of n writes costs n²/2 lookups per
// list: a pool of weak writes built up while there was no leader then
// stalled the new leader's replay for seconds, and its followers elected
// another.
func TestReplayOrderWalksEachChainOnce(t *testing.T) {
	const n, witnesses = 4000, 3
	lists := make([][]witness.Entry, witnesses)
	for w := range lists {
		for seq := uint64(1); seq <= n; seq++ {
			e := after(op(1, seq), seq-1)
			e.Op.Level, e.Op.Kind, e.Op.Key = wire.Weak, wire.Put, strconv.FormatUint(seq%7, 10)
			lists[w] = append(lists[w], e)
		}
	}
	// One strong read at the end, so that read dependencies are named.
	for w := range lists {
		lists[w] = append(lists[w], after(op(2, 1), 0))
	}
	lookups := 0
	done := func(wire.OpID) bool { lookups++; return false }
	order := replayOrder(lists, done, 2, 1)
	require.Len(t, order, n+1)
	require.LessOrEqual(t, lookups, 8*witnesses*(n+1), "lookups of the done set for %d entries in %d lists", n+1, witnesses)
}

// BenchmarkReplayOrderLeaderlessPool orders a pool of the shape a
// leaderless spell at 99 % weak leaves (bench --weak-ratio 99 --threads 32
// --pendings 15): 20,000 records of 288 sessions, one in ten strong (the
// pools hold weak writes and strong operations, not weak reads), keys
// Zipf-distributed over a million (s = 1.01: the generator needs s > 1,
// the bench draws 0.99), as two witnesses saw them with some records late:
// N = 3, so the recovery takes two lists.
func BenchmarkReplayOrderLeaderlessPool(b *testing.B) {
	const n, sessions, witnesses = 20000, 288, 2
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.01, 1, 1<<20)
	base := make([]witness.Entry, 0, n)
	prev := make(map[uint64]uint64)
	seqs := make(map[uint64]uint64)
	for range n {
		s := uint64(rng.IntN(sessions) + 1)
		seqs[s]++
		e := after(op(s, seqs[s]), prev[s])
		e.Op.Key = strconv.FormatUint(zipf.Uint64(), 10)
		switch roll := rng.IntN(100); {
		case roll == 0:
			e.Op.Kind = wire.Put
		case roll < 10:
			e.Op.Kind = wire.Get
		default:
			e.Op.Level, e.Op.Kind = wire.Weak, wire.Put
			prev[s] = seqs[s]
		}
		base = append(base, e)
	}
	lists := make([][]witness.Entry, witnesses)
	for w := range lists {
		lists[w] = slices.Clone(base)
		receiveLate(lists[w], w)
	}
	for b.Loop() {
		replayOrder(lists, notDone, 1, 0)
	}
}
