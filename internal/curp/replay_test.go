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

// An operation replays after its session's previous weak write, whatever
// order the witnesses saw them in: a hybrid protocol holds an operation back
// until that write is logged, so one replayed early would be held while
// other sessions' operations, some invoked after it completed, overtook it.
// Nothing else in a session is forced: operations in flight together are
// concurrent.
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
		// The shape of another (seed 1082): session 5 had strong 11 and weak
		// 12 in flight together; 11 reached two witnesses late. 12, then
		// strong 18 (after 12), completed before 1.18 was invoked.
		{"operations in flight together are not forced into sequence order",
			[][]witness.Entry{
				ops(op(5, 10), after(op(5, 12), 10), after(op(5, 18), 12), op(1, 18), after(op(5, 11), 10)),
				ops(op(5, 10), after(op(5, 11), 10), after(op(5, 12), 10), after(op(5, 18), 12), op(1, 18)),
				ops(op(5, 10), after(op(5, 12), 10), after(op(5, 18), 12), op(1, 18), after(op(5, 11), 10)),
			}, 2,
			[]wire.OpID{id(5, 10), id(5, 12), id(5, 18), id(1, 18), id(5, 11)}},
		// 1.1 -> 1.2 (previous weak write) -> 2.1 -> 1.1 (witnesses): 1.2 is
		// seen first but must wait for 1.1, so the cycle breaks at 2.1.
		{"a cycle breaks at the earliest-seen operation whose previous weak write is taken",
			[][]witness.Entry{ops(after(op(1, 2), 1), op(2, 1)), ops(op(2, 1), op(1, 1))}, 1,
			[]wire.OpID{id(2, 1), id(1, 1), id(1, 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, ids(replayOrder(tt.lists, tt.threshold)))
		})
	}
}
