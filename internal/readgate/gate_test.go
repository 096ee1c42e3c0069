package readgate

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// fakeLog is a log whose entries have the given terms (index i at
// terms[i-1]), committed and applied up to the given indexes.
type fakeLog struct {
	terms              []uint64
	committed, applied uint64
}

func (l *fakeLog) AppliedIndex() uint64 { return l.applied }
func (l *fakeLog) Committed() uint64    { return l.committed }
func (l *fakeLog) Term(i uint64) (uint64, bool) {
	if i == 0 || i > uint64(len(l.terms)) {
		return 0, false
	}
	return l.terms[i-1], true
}

func read(key uint64, committed uint64, spec wire.Position) *wire.Request {
	return &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 9, Seq: 1}, Kind: wire.Get, Key: strconv.FormatUint(key, 10)},
		MinApplied: committed, SpecFloor: spec}
}

// appendAll reports every entry of l appended: a write to key 1 at the
// indexes in writes, reads of key 2 elsewhere.
func appendAll(t *Gate, l *fakeLog, writes ...uint64) {
	for i := range uint64(len(l.terms)) {
		op := wire.Op{Kind: wire.Get, Key: "2"}
		for _, w := range writes {
			if w == i+1 {
				op = wire.Op{Kind: wire.Put, Key: "1"}
			}
		}
		t.Appended(i+1, &op)
	}
}

func TestCommittedFloorNeedsTheCommitIndex(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1, 1, 1, 1}, committed: 2, applied: 2}
	g := New()
	appendAll(g, l)
	// The log reaches 4 with no write to the key after 2, but 3 and 4 are
	// not committed: a new leader may replace them with a write.
	require.Equal(t, Wait, g.Check(l, read(1, 4, wire.Position{})))
	l.committed = 4
	require.Equal(t, Serve, g.Check(l, read(1, 4, wire.Position{})))
}

func TestCommittedFloorWaitsForWritesToTheKey(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1, 1, 1}, committed: 4, applied: 2}
	g := New()
	appendAll(g, l, 3)
	require.Equal(t, Wait, g.Check(l, read(1, 4, wire.Position{})), "a write to the key at 3 is not applied")
	require.Equal(t, Serve, g.Check(l, read(2, 4, wire.Position{})), "no write to key 2 before 4")
	g.Applied(3, &wire.Op{Kind: wire.Put, Key: "1"})
	l.applied = 3
	require.Equal(t, Serve, g.Check(l, read(1, 4, wire.Position{})))
}

func TestSpeculativeFloorNeedsThatVeryEntry(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1, 2, 2}, committed: 2, applied: 2}
	g := New()
	appendAll(g, l)
	// The session saw a fast-path result at index 4 of term 3; this log's
	// index 4 is term 2's, uncommitted: wait for the log to settle.
	require.Equal(t, Wait, g.Check(l, read(1, 0, wire.Position{Term: 3, Index: 4})))
	require.Equal(t, Serve, g.Check(l, read(1, 0, wire.Position{Term: 2, Index: 4})))
	// Index 4 committed with term 2: term 3's speculation at 4 was replayed
	// elsewhere.
	l.committed = 4
	require.Equal(t, Lost, g.Check(l, read(1, 0, wire.Position{Term: 3, Index: 4})))
}

// A deposed leader speculated at index 6 of term 3; the cluster moved on in
// term 4 and its log never reached index 6 (nothing more was written).
// Waiting for index 6 would wait forever; term 4 committed at 4 proves no
// log holds term 3's entry at 6.
func TestSpeculationBeyondALaterTermIsLost(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1, 3, 4}, committed: 3, applied: 3}
	g := New()
	appendAll(g, l)
	require.Equal(t, Wait, g.Check(l, read(1, 0, wire.Position{Term: 3, Index: 6})),
		"committed up to term 3 only: term 3's leader may still extend it to 6")
	l.committed = 4
	require.Equal(t, Lost, g.Check(l, read(1, 0, wire.Position{Term: 3, Index: 6})))
	require.Equal(t, Wait, g.Check(l, read(1, 0, wire.Position{Term: 4, Index: 6})),
		"term 4's own entry at 6 may yet come")
}

func TestSpeculativeFloorWaitsForWritesBeforeIt(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1, 2, 2}, committed: 2, applied: 2}
	g := New()
	appendAll(g, l, 4)
	require.Equal(t, Wait, g.Check(l, read(1, 0, wire.Position{Term: 2, Index: 4})))
	require.Equal(t, Serve, g.Check(l, read(2, 0, wire.Position{Term: 2, Index: 4})))
}

// TestSpecSettledNeedsTheEntryApplied: everything logged before a
// speculative floor is applied once the applied state holds that very
// entry; held but not applied, or held with another term, it is not (the
// latter is lost, which settles it too: the read goes to the leader).
func TestSpecSettledNeedsTheEntryApplied(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 2, 2, 2}, committed: 2, applied: 2}
	g := New()
	appendAll(g, l)
	at := wire.Position{Term: 2, Index: 4}
	require.False(t, g.SpecSettled(l, read(2, 0, wire.Position{})), "no floor")
	require.False(t, g.SpecSettled(l, read(2, 0, at)), "held, not applied")
	l.committed, l.applied = 4, 4
	require.True(t, g.SpecSettled(l, read(2, 0, at)))
	require.True(t, g.SpecSettled(l, read(2, 0, wire.Position{Term: 1, Index: 3})), "lost")
	require.False(t, g.SpecSettled(l, read(2, 0, wire.Position{Term: 2, Index: 6})), "ahead of the log")
}

// TestTransactionsWriteEveryKey: a transaction may write any key, whatever
// its operation's key (a client leaves it empty), so a read behind an
// unapplied one waits, on either floor, until it is applied, and a
// replaced one counts no more. The checked simulation found the gate
// keeping a transaction under its operation's key: a weak read served
// past its session's own transaction missed its write (W1, CURP-HT and
// CURP-HO).
func TestTransactionsWriteEveryKey(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1}, committed: 2, applied: 2}
	g := New()
	appendAll(g, l)
	l.terms, l.committed = append(l.terms, 1, 1), 4
	txn := &wire.Op{Kind: wire.Txn, Value: wire.AppendTxn(nil, &wire.Transaction{
		Then: []wire.TxnOp{{Kind: wire.Put, Key: "1", Value: []byte("v")}}})}
	g.Appended(3, txn)
	g.Appended(4, &wire.Op{Kind: wire.Get, Key: "2"})
	for _, key := range []uint64{1, 2} {
		require.Equal(t, Wait, g.Check(l, read(key, 4, wire.Position{})), "key %d, committed floor", key)
		require.Equal(t, Wait, g.Check(l, read(key, 0, wire.Position{Term: 1, Index: 4})), "key %d, speculative floor", key)
	}
	require.Equal(t, Serve, g.Check(l, read(1, 2, wire.Position{})), "the floor is before the transaction")
	g.Applied(3, txn)
	l.applied = 3
	require.Equal(t, Serve, g.Check(l, read(1, 4, wire.Position{})))
	require.Equal(t, Serve, g.Check(l, read(1, 0, wire.Position{Term: 1, Index: 4})))

	// A new leader replaces an unapplied transaction with a read.
	l = &fakeLog{terms: []uint64{1, 1}, committed: 1, applied: 1}
	g = New()
	appendAll(g, l)
	l.terms = append(l.terms, 1)
	g.Appended(3, txn)
	require.Equal(t, Wait, g.Check(l, read(2, 0, wire.Position{Term: 1, Index: 3})))
	l.terms[2] = 2
	g.Appended(3, &wire.Op{Kind: wire.Get, Key: "2"})
	require.Equal(t, Serve, g.Check(l, read(2, 0, wire.Position{Term: 2, Index: 3})))
}

func TestEntriesNotYetReportedDoNotCount(t *testing.T) {
	// The log already holds 3 and 4 (raft stored them) but the gate has
	// seen only up to 2: a write at 4 it has not heard of may be there.
	l := &fakeLog{terms: []uint64{1, 1, 1, 1}, committed: 4, applied: 2}
	g := New()
	for i := uint64(1); i <= 2; i++ {
		g.Appended(i, &wire.Op{Kind: wire.Get, Key: "2"})
	}
	require.Equal(t, Wait, g.Check(l, read(1, 0, wire.Position{Term: 1, Index: 4})))
	require.Equal(t, Wait, g.Check(l, read(1, 4, wire.Position{})))
	require.Equal(t, Wait, g.Check(l, read(1, 0, wire.Position{Term: 2, Index: 4})), "not lost before it is seen")
}

// A replica restarted, or caught up by snapshot, and has since applied up
// to 10 entries that carry no operation (a leader's empty entry, clock
// entries): the gate heard of no entry appended, but the applied state
// covers them. A speculative floor at 6 whose entry the log no longer
// holds (compacted) is lost, not waited for: the read, re-sent to this
// replica, waited for good (the checked simulation's seed 8648, CURP-HO,
// N = 3).
func TestAppliedEntriesCountAsSeen(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1, 1, 1, 1}, committed: 10, applied: 10}
	g := New()
	require.Equal(t, Lost, g.Check(l, read(1, 0, wire.Position{Term: 3, Index: 6})))
	require.Equal(t, Serve, g.Check(l, read(1, 5, wire.Position{Term: 1, Index: 5})),
		"the applied log holds term 1's entry at 5")
	require.Equal(t, Serve, g.Check(l, read(1, 8, wire.Position{})))
}

func TestReplacedTailDropsItsWrites(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1, 1}, committed: 1, applied: 1}
	g := New()
	appendAll(g, l, 3)
	// A new leader replaces index 3 (a write) with a read of key 2.
	l.terms[2] = 2
	g.Appended(3, &wire.Op{Kind: wire.Get, Key: "2"})
	require.Equal(t, Serve, g.Check(l, read(1, 0, wire.Position{Term: 2, Index: 3})))
}

func TestReleaseAnswersInArrivalOrder(t *testing.T) {
	l := &fakeLog{terms: []uint64{1, 1, 1}, committed: 1, applied: 1}
	g := New()
	appendAll(g, l, 2)
	var got []uint64
	answer := func(_ wire.NodeID, req *wire.Request, v Verdict) {
		require.Equal(t, Serve, v)
		got = append(got, req.Op.ID.Seq)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		r := read(1, 0, wire.Position{Term: 1, Index: 3})
		r.Op.ID.Seq = seq
		g.Serve(l, 1, r, answer)
	}
	require.Empty(t, got)
	g.Applied(2, &wire.Op{Kind: wire.Put, Key: "1"})
	l.applied, l.committed = 2, 2
	g.Release(l, answer)
	require.Equal(t, []uint64{1, 2, 3}, got)
}
