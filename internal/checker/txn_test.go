package checker

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

const z = "z"

// txn builds a transaction that completed, its Then branch ops having
// run with the given results.
func txn(l wire.Level, sess uint64, inv, ret int64, ops []wire.TxnOp, results ...wire.TxnOpResult) history.Event {
	return history.Event{Session: sess, Level: l, Kind: wire.Txn, Invoke: inv, Return: ret, Outcome: history.OK,
		Value:  wire.AppendTxn(nil, &wire.Transaction{Then: ops}),
		Result: wire.AppendTxnResult(nil, &wire.TxnResult{Succeeded: true, Results: results})}
}

// cas builds a transaction that completed: if key holds old (or, old
// empty, does not exist), put new to it, else read it.
func cas(l wire.Level, sess uint64, inv, ret int64, key, old, new string, succeeded bool, res wire.TxnOpResult) history.Event {
	c := wire.Compare{Key: key, Target: wire.CompareValue, Result: wire.Equal, Value: []byte(old)}
	if old == "" {
		c = wire.Compare{Key: key, Target: wire.CompareVersion, Result: wire.Equal}
	}
	return history.Event{Session: sess, Level: l, Kind: wire.Txn, Invoke: inv, Return: ret, Outcome: history.OK,
		Value: wire.AppendTxn(nil, &wire.Transaction{Compares: []wire.Compare{c},
			Then: []wire.TxnOp{tput(key, new)}, Else: []wire.TxnOp{trange(key, "")}}),
		Result: wire.AppendTxnResult(nil, &wire.TxnResult{Succeeded: succeeded, Results: []wire.TxnOpResult{res}})}
}

// txnPending builds a transaction of unknown outcome.
func txnPending(l wire.Level, sess uint64, inv int64, then, els []wire.TxnOp) history.Event {
	return history.Event{Session: sess, Level: l, Kind: wire.Txn, Invoke: inv, Outcome: history.Unknown,
		Value: wire.AppendTxn(nil, &wire.Transaction{
			Compares: []wire.Compare{{Key: x, Target: wire.CompareVersion, Result: wire.Equal}},
			Then:     then, Else: els})}
}

func tput(key, v string) wire.TxnOp { return wire.TxnOp{Kind: wire.Put, Key: key, Value: []byte(v)} }

func trange(key, end string) wire.TxnOp { return wire.TxnOp{Kind: wire.Get, Key: key, End: end} }

func tdel(key, end string) wire.TxnOp { return wire.TxnOp{Kind: wire.Delete, Key: key, End: end} }

// found lists key-value pairs as a range's answer.
func found(pairs ...string) wire.TxnOpResult {
	var r wire.TxnOpResult
	for i := 0; i < len(pairs); i += 2 {
		r.KVs = append(r.KVs, wire.KeyValue{Key: pairs[i], Value: []byte(pairs[i+1])})
	}
	r.Count = uint64(len(r.KVs))
	return r
}

var none wire.TxnOpResult // the answer of a put, or of a range that found nothing

// TestTransactions: correct transactional histories pass, and each
// violation a transaction's sub-operations show is caught.
func TestTransactions(t *testing.T) {
	limited := trange("", "\x00")
	limited.Limit = 2
	cut := found(x, "a", y, "b")
	cut.Count, cut.More = 3, true
	prevDel := tdel(x, z)
	prevDel.PrevKV = true
	removed := found(x, "a", y, "b")
	removed.Count, removed.Deleted = 0, 2
	keysOnly := trange(x, "\x00")
	keysOnly.KeysOnly = true
	countOnly := trange(x, "\x00")
	countOnly.CountOnly = true
	prevPut := tput(x, "b")
	prevPut.PrevKV = true

	tests := []historyCase{
		{name: "ok: a txn puts two keys, a later txn reads a range of both",
			events: numbered(txn(S, 1, 0, 10, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, none, none),
				txn(S, 2, 20, 30, []wire.TxnOp{trange(x, z)}, found(x, "a", y, "b")),
				get(W, 3, y, "b", 40, 50))},
		{name: "ok: a range read concurrent with the txn sees none of it",
			events: numbered(txn(S, 1, 0, 30, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, none, none),
				txn(S, 2, 10, 20, []wire.TxnOp{trange(x, z)}, none))},
		{name: "ok: a range with a limit says nothing of the keys past its last",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, y, "b", 20, 30), put(S, 1, z, "c", 40, 50),
				txn(S, 2, 60, 70, []wire.TxnOp{limited}, cut))},
		{name: "ok: a delete-range empties every key of its span",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, y, "b", 0, 10), put(S, 1, z, "c", 0, 10),
				txn(S, 2, 20, 30, []wire.TxnOp{tdel(x, z)}, wire.TxnOpResult{Deleted: 2}),
				get(S, 3, x, "", 40, 50), get(W, 3, y, "", 60, 70), get(S, 3, z, "c", 80, 90),
				txn(S, 3, 100, 110, []wire.TxnOp{trange(x, "\x00")}, found(z, "c")))},
		{name: "ok: a delete-range's previous values and a put's are reads",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, y, "b", 0, 10),
				txn(S, 2, 20, 30, []wire.TxnOp{prevDel}, removed),
				txn(W, 2, 40, 50, []wire.TxnOp{prevPut}, none))},
		{name: "ok: an answer out of key order shows nothing absent",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, y, "b", 0, 10), put(S, 1, z, "c", 0, 10),
				txn(S, 2, 20, 30, []wire.TxnOp{trange(x, "\x00")}, found(z, "c", x, "a")))},
		{name: "ok: KeysOnly and CountOnly ranges",
			events: numbered(put(S, 1, x, "a", 0, 10),
				txn(S, 2, 20, 30, []wire.TxnOp{keysOnly, countOnly}, found(x, ""), wire.TxnOpResult{Count: 1}),
				del(S, 1, x, 40, 50),
				txn(S, 2, 60, 70, []wire.TxnOp{keysOnly, countOnly}, none, none))},
		{name: "ok: a txn reads what it wrote",
			events: numbered(put(S, 1, x, "a", 0, 10),
				txn(S, 2, 20, 30, []wire.TxnOp{trange(x, ""), tput(x, "b"), trange(x, "")},
					found(x, "a"), none, found(x, "b")),
				get(S, 3, x, "b", 40, 50))},
		{name: "ok: a txn reads its own delete",
			events: numbered(put(S, 1, x, "a", 0, 10),
				txn(S, 2, 20, 30, []wire.TxnOp{trange(x, ""), tdel(x, ""), trange(x, "")},
					found(x, "a"), wire.TxnOpResult{Deleted: 1}, none),
				get(S, 3, x, "", 40, 50))},
		{name: "ok: a txn of unknown outcome, either branch read",
			events: numbered(txnPending(S, 1, 0, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, []wire.TxnOp{tput(x, "c"), tput(z, "d")}),
				get(S, 2, x, "a", 20, 30), get(S, 2, y, "b", 40, 50),
				get(W, 3, z, "", 20, 30))},
		{name: "ok: a write both branches make alike",
			events: numbered(txnPending(S, 1, 0, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, []wire.TxnOp{tput(x, "a"), tput(z, "d")}),
				get(S, 2, x, "a", 20, 30), get(S, 2, y, "", 40, 50), get(S, 2, z, "", 60, 70))},

		{name: "ok: compare-and-set, succeeding and failing",
			events: numbered(cas(S, 1, 0, 10, x, "", "a", true, none), cas(S, 2, 20, 30, x, "a", "b", true, none),
				cas(W, 1, 40, 50, x, "a", "c", false, found(x, "b")), cas(S, 3, 60, 70, x, "", "d", false, found(x, "b")))},

		{name: "S1: a range read returns a stale value after a strong put completed",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "b", 20, 30),
				txn(S, 2, 40, 50, []wire.TxnOp{trange(x, z)}, found(x, "a"))),
			want: []string{"S1", "W5"}, pattern: "txn 2.1 then[0] read 1.1's value"},
		{name: "S1: a range read misses a key put before it",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, y, "b", 20, 30),
				txn(S, 2, 40, 50, []wire.TxnOp{trange(x, z)}, found(x, "a"))),
			want: []string{"S1", "W5"}, pattern: "txn 2.1 then[0] found nothing"},
		{name: "W5: a reader sees one put of a txn, then misses the other",
			events: numbered(txn(S, 1, 0, 100, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, none, none),
				get(S, 2, y, "b", 20, 30), get(S, 2, x, "", 40, 50)),
			want: []string{"W5"}, pattern: "another write of txn 1.1"},
		{name: "W3: a weak reader sees one put of a weak txn, then the value the txn's session overwrote",
			events: numbered(put(W, 1, x, "o", 0, 5),
				txn(W, 1, 10, 20, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, none, none),
				get(W, 2, y, "b", 30, 40), get(W, 2, x, "o", 50, 60)),
			want: []string{"W3"}, pattern: "WriteCORead: 2.2 read 1.1's value on key \"x\" although put txn 1.2 then[0], newer"},
		{name: "W5: a txn of unknown outcome seen half applied",
			events: numbered(txnPending(W, 1, 0, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, nil),
				get(W, 2, y, "b", 20, 30), get(W, 2, x, "", 40, 50)),
			want: []string{"W5"}, pattern: "another write of txn 1.1"},
		{name: "W5: one range read sees a txn half applied",
			events: numbered(slot(put(W, 3, y, "p", 0, 5), 1),
				slot(txn(S, 1, 10, 100, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, none, none), 5),
				slot(txn(S, 2, 20, 30, []wire.TxnOp{trange(x, z)}, found(x, "a", y, "p")), 5)),
			want: []string{"W5"}, pattern: "StaleLogRead: txn 2.1 then[0] read 3.1's value on key \"y\" although put txn 1.1 then[1], newer"},
		{name: "S1: a compare sees a value a completed put overwrote",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "b", 20, 30), cas(S, 2, 40, 50, x, "a", "c", true, none)),
			want:   []string{"S1", "W5"}, pattern: "txn 2.1 compare[0] read 1.1's value"},
		{name: "S1: a compare finds absent a key a completed put wrote",
			events: numbered(put(S, 1, x, "a", 0, 10), cas(S, 2, 20, 30, x, "", "c", true, none)),
			want:   []string{"S1", "W5"}, pattern: "txn 2.1 compare[0] found nothing"},
		{name: "S1: a failed compare contradicts the branch's read",
			events: numbered(put(S, 1, x, "a", 0, 10), cas(S, 2, 20, 30, x, "", "c", false, none)),
			want:   []string{"S1"}, pattern: "TxnInternal: txn 2.1 else[0] found nothing on key \"x\", though compare[0] found a value"},
		{name: "S1: two compare-and-sets succeed on one value",
			events: numbered(put(S, 1, x, "a", 0, 10), cas(S, 2, 20, 30, x, "a", "b", true, none),
				cas(W, 3, 20, 40, x, "a", "c", true, none)),
			want: []string{"S1"}, pattern: "LostUpdate: txn 2.1 (compare[0], then then[0]) and txn 3.1 (compare[0], then then[0]) both read value 61 on key \"x\""},
		{name: "W1: a read inside a txn misses its session's earlier write",
			events: numbered(put(W, 1, x, "a", 0, 10),
				txn(W, 1, 20, 30, []wire.TxnOp{trange(x, z)}, none)),
			want: []string{"W1"}, pattern: "txn 1.2 then[0] found nothing"},
		{name: "W1: a later read misses its session's write inside a txn",
			events: numbered(txn(W, 1, 0, 10, []wire.TxnOp{tput(y, "b"), tput(x, "a")}, none, none),
				get(W, 1, x, "", 20, 30)),
			want: []string{"W1"}, pattern: "put txn 1.1 then[1]"},
		{name: "W6: a txn returns a value no write wrote",
			events: numbered(put(W, 1, x, "a", 0, 10),
				txn(W, 2, 20, 30, []wire.TxnOp{trange(x, z)}, found(x, "zz"))),
			want: []string{"W6"}, pattern: "ThinAirRead"},
		{name: "S1: a txn reads back something else than it wrote",
			events: numbered(put(S, 1, x, "a", 0, 10),
				txn(S, 2, 20, 30, []wire.TxnOp{tput(x, "b"), trange(x, "")}, none, found(x, "a"))),
			want: []string{"S1"}, pattern: "TxnInternal: txn 2.1 then[1]"},
		{name: "S1: a txn reads one key twice and finds two values",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "c", 20, 30),
				txn(S, 2, 0, 40, []wire.TxnOp{trange(x, ""), trange(x, z)}, found(x, "a"), found(x, "c"))),
			want: []string{"S1"}, pattern: "TxnInternal"},
		{name: "S1: a delete-range's keys read back afterwards",
			events: numbered(put(S, 1, x, "a", 0, 10),
				txn(S, 2, 20, 30, []wire.TxnOp{tdel("", "\x00")}, wire.TxnOpResult{Deleted: 1}),
				get(S, 3, x, "a", 40, 50)),
			want: []string{"S1", "W5"}, pattern: "delete txn 2.1 then[0]"},
	}
	runHistoryCases(t, tests)
}

// historyCase is a history, the properties its check must report (none:
// clean) and a text one of its violations must hold.
type historyCase struct {
	name    string
	events  []history.Event
	want    []string
	pattern string
}

// runHistoryCases checks each case's history, cross-checked.
func runHistoryCases(t *testing.T, tests []historyCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(&history.File{Events: tc.events}, Options{CrossCheck: true})
			for _, v := range r.Violations {
				t.Log(v)
			}
			require.NoError(t, r.Err)
			assert.Equal(t, tc.want, properties(r))
			if tc.pattern != "" {
				assert.True(t, slices.ContainsFunc(r.Violations, func(v Violation) bool {
					return strings.Contains(v.String(), tc.pattern)
				}), "no %q in %v", tc.pattern, r.Violations)
			}
		})
	}
}

// TestTxnListedTwiceWithDifferentResults: X1 compares a transaction's
// results, and a retry recorded with the same one is no violation.
func TestTxnListedTwiceWithDifferentResults(t *testing.T) {
	base := numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "b", 20, 30))
	ops := []wire.TxnOp{trange(x, "")}
	first := txn(S, 2, 40, 50, ops, found(x, "b"))
	first.Seq = 1
	again := first
	r := Check(&history.File{Events: append(slices.Clone(base), first, again)}, Options{})
	require.True(t, r.Clean(), "%v", r.Violations)

	other := txn(S, 2, 40, 50, ops, found(x, "a"))
	other.Seq = 1
	r = Check(&history.File{Events: append(slices.Clone(base), first, other)}, Options{})
	require.Contains(t, properties(r), "X1")
	require.Contains(t, r.Violations[0].String(), "txn (0 compares, then 1 ops, else 0 ops) -> then")
}

// TestTxnViolationNamesTheSubOperation: a violation lists a transaction's
// sub-operation as a single-key operation, named by the transaction and
// its place in the program.
func TestTxnViolationNamesTheSubOperation(t *testing.T) {
	events := numbered(put(S, 1, x, "a", 0, 10), put(S, 1, x, "b", 20, 30),
		txn(S, 2, 40, 50, []wire.TxnOp{tput(y, "c"), trange(x, z)}, none, found(x, "a", y, "c")))
	r := Check(&history.File{Events: events}, Options{})
	i := slices.IndexFunc(r.Violations, func(v Violation) bool { return v.Property == "S1" })
	require.GreaterOrEqual(t, i, 0, "%v", r.Violations)
	v := r.Violations[i]
	assert.Contains(t, v.String(), `txn 2.1 then[1] strong get key "x" -> value of 1.1 [40ns, 50ns]`)
	k := slices.IndexFunc(v.Ops, func(o Op) bool { return o.Txn != nil })
	require.GreaterOrEqual(t, k, 0)
	assert.Equal(t, wire.Txn, v.Ops[k].Txn.Kind)
	assert.Equal(t, wire.Get, v.Ops[k].Kind)
	assert.Equal(t, "then[1]", v.Ops[k].Part)
	assert.Equal(t, "txn 2.1 then[1]", v.Ops[k].Name())
}

// TestTxnDuplicateValueIsUncheckable: a put inside a transaction must
// write a value no other put writes to its key.
func TestTxnDuplicateValueIsUncheckable(t *testing.T) {
	r := Check(&history.File{Events: numbered(put(W, 1, x, "a", 0, 5),
		txn(S, 2, 10, 15, []wire.TxnOp{tput(x, "a")}, none))}, Options{})
	assert.ErrorContains(t, r.Err, "txn 2.1 then[0] both write")
}

// TestTxnLogOrder: a transaction's writes are logged at its slot, found
// in the log by its identity.
func TestTxnLogOrder(t *testing.T) {
	events := numbered(
		txn(S, 1, 0, 10, []wire.TxnOp{tput(x, "a"), tput(y, "b")}, none, none),
		put(W, 2, x, "w", 20, 30),
		put(S, 1, x, "c", 40, 50),
		get(S, 3, x, "c", 60, 70),
	)
	a, w, c := events[0], events[1], events[2]
	res := Check(&history.File{Events: events, Log: logOfEvents(a, w, c)}, Options{})
	require.True(t, res.Clean(), "%v", res.Violations)
	res = Check(&history.File{Events: events, Log: logOfEvents(w, a, c)}, Options{})
	require.Equal(t, []string{"S1"}, properties(res))
	require.Contains(t, res.Violations[0].Detail, "LogOrder: key \"x\": 2.1 is logged at slot 2, before txn 1.1 then[0] at slot 3")
}
