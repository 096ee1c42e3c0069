package epaxos

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func put(session, seq uint64, key string) wire.Command {
	return wire.Command{Ops: []wire.Op{{ID: wire.OpID{Session: session, Seq: seq}, Kind: wire.Put, Key: key}}, AckedBelow: []uint64{seq}}
}

func get(session, seq uint64, key string) wire.Command {
	return wire.Command{Ops: []wire.Op{{ID: wire.OpID{Session: session, Seq: seq}, Kind: wire.Get, Key: key}}, AckedBelow: []uint64{seq}}
}

func in(replica wire.NodeID, num uint64) wire.Instance {
	return wire.Instance{Replica: replica, Num: num}
}

// TestDepsStandIns covers which commands stand for a key's last executed
// write: a committed pending write does, an uncommitted one does not (its
// own dependencies may leave the executed write out for the same reason),
// and a command never stands for anything in its own dependencies.
func TestDepsStandIns(t *testing.T) {
	cf := newConflicts()
	w1, w2, self := in(1, 1), in(2, 1), in(3, 1)
	first := put(1, 1, "k")
	cf.add(w1, &first)
	cf.remove(w1, &first, true)
	second := put(2, 1, "k")
	cf.add(w2, &second)
	committed := map[wire.Instance]bool{}
	isCommitted := func(i wire.Instance) bool { return committed[i] }
	read := get(3, 1, "k")
	require.Equal(t, []wire.Instance{w1, w2}, cf.deps(self, &read, isCommitted), "an uncommitted write stood for the executed one")
	committed[w2] = true
	require.Equal(t, []wire.Instance{w2}, cf.deps(self, &read, isCommitted))

	// The command itself, pending already (a pre-accept sent again).
	cf2 := newConflicts()
	cf2.add(w1, &first)
	cf2.remove(w1, &first, true)
	mine := put(3, 1, "k")
	cf2.add(self, &mine)
	committed[self] = true
	require.Equal(t, []wire.Instance{w1}, cf2.deps(self, &mine, isCommitted))
}

// TestDepsConflicts covers what conflicts: reads with writes of their key,
// not with each other; a session's operations with each other; scans with
// the writes in their range; transactions with everything.
func TestDepsConflicts(t *testing.T) {
	cf := newConflicts()
	none := func(wire.Instance) bool { return false }
	r1 := get(1, 1, "a")
	cf.add(in(1, 1), &r1)
	r2 := get(2, 1, "a")
	require.Empty(t, cf.deps(in(2, 1), &r2, none), "two reads conflicted")
	cf.add(in(2, 1), &r2)
	w := put(3, 1, "a")
	require.Equal(t, []wire.Instance{in(1, 1), in(2, 1)}, cf.deps(in(3, 1), &w, none))
	next := get(1, 2, "b")
	require.Equal(t, []wire.Instance{in(1, 1)}, cf.deps(in(1, 2), &next, none), "a session's operations did not conflict")

	wb := put(4, 1, "b")
	cf.add(in(4, 1), &wb)
	scan := wire.NewScan(wire.Strong, wire.TxnOp{Kind: wire.Get, Key: "a", End: "c"})
	scan.ID = wire.OpID{Session: 5, Seq: 1}
	sc := wire.Command{Ops: []wire.Op{scan}, AckedBelow: []uint64{1}}
	require.Equal(t, []wire.Instance{in(4, 1)}, cf.deps(in(5, 1), &sc, none), "a scan missed a write in its range, or took a read")
	cf.add(in(5, 1), &sc)
	wc := put(6, 1, "bb")
	require.Equal(t, []wire.Instance{in(5, 1)}, cf.deps(in(6, 1), &wc, none), "a write missed a scan over its key")

	txn := wire.Command{Ops: []wire.Op{{ID: wire.OpID{Session: 7, Seq: 1}, Kind: wire.Txn}}, AckedBelow: []uint64{1}}
	require.Equal(t, []wire.Instance{in(1, 1), in(2, 1), in(4, 1), in(5, 1)}, cf.deps(in(7, 1), &txn, none))
	cf.add(in(7, 1), &txn)
	require.Equal(t, []wire.Instance{in(7, 1)}, cf.deps(in(8, 1), new(get(8, 1, "z")), none), "an operation missed a transaction")
}
