package curp

import (
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

// ops lists the entries given, as in ops(op(2, 17), op(2, 20)).
func ops(es ...witness.Entry) []witness.Entry { return es }

// op is operation session.seq with no previous weak write.
func op(session, seq uint64) witness.Entry {
	return witness.Entry{Op: wire.Op{ID: wire.OpID{Session: session, Seq: seq}}}
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
		{"chains across witnesses", [][]witness.Entry{entries(3, 4), entries(2, 3), entries(1, 2)}, 1, []uint64{1, 2, 3, 4}},
		{"disagreement: the first witness decides", [][]witness.Entry{entries(1, 2), entries(2, 1)}, 2, []uint64{1, 2}},
		{"a longer cycle ends at the earliest-seen", [][]witness.Entry{entries(1, 2), entries(2, 3), entries(3, 1)}, 1, []uint64{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, sessionsOf(replayOrder(tt.lists, tt.threshold)))
		})
	}
}

// A session's operations replay in the order it issued them, whatever
// order the witnesses saw them in: a hybrid protocol holds an operation back
// until the session's previous weak write is logged, so one replayed early
// would be held while other sessions' operations, some invoked after it
// completed, overtook it.
func TestReplayOrderKeepsSessionOrder(t *testing.T) {
	tests := []struct {
		name      string
		lists     [][]witness.Entry
		threshold int
		want      []wire.OpID
	}{
		{"against every witness", [][]witness.Entry{ops(op(2, 20), op(2, 17)), ops(op(2, 20), op(2, 17))}, 2,
			[]wire.OpID{id(2, 17), id(2, 20)}},
		// The shape of a replay the checked simulation found (CURP-HO, N = 5,
		// seed 1374): session 2's weak write 17 arrived late; 1.16 was
		// invoked after 2.23 completed and must follow it.
		{"an earlier operation seen late still precedes its successors and theirs",
			[][]witness.Entry{
				ops(op(2, 19), op(2, 20), op(2, 21), op(2, 17), op(2, 23), op(1, 16)),
				ops(op(2, 19), op(2, 20), op(2, 17), op(2, 21), op(2, 23), op(1, 16)),
			}, 2,
			[]wire.OpID{id(2, 17), id(2, 19), id(2, 20), id(2, 21), id(2, 23), id(1, 16)}},
		// 1.1 -> 1.2 (session) -> 2.1 -> 1.1 (witnesses): 1.2 is seen first
		// but must wait for 1.1; 2.1 and 1.1 are each after one pending
		// operation, and 2.1 was seen first.
		{"a cycle breaks only where session order allows",
			[][]witness.Entry{ops(op(1, 2), op(2, 1)), ops(op(2, 1), op(1, 1))}, 1,
			[]wire.OpID{id(2, 1), id(1, 1), id(1, 2)}},
		// A -> B -> C -> A and D -> A, C -> D: A, seen first, would override
		// two witness orders (after C and D); B overrides one.
		{"a cycle breaks where it overrides the fewest witnesses",
			[][]witness.Entry{ops(op(1, 1), op(2, 1)), ops(op(2, 1), op(3, 1)), ops(op(3, 1), op(1, 1)),
				ops(op(4, 1), op(1, 1)), ops(op(3, 1), op(4, 1))}, 1,
			[]wire.OpID{id(2, 1), id(3, 1), id(4, 1), id(1, 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, ids(replayOrder(tt.lists, tt.threshold)))
		})
	}
}
