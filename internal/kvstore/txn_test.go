package kvstore

import (
	"bytes"
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// txnSession is the session the tests' transactions are applied in.
const txnSession = 99

// txn is the operation of a transaction, with seq for its sequence number.
func txn(seq uint64, t *wire.Transaction) *wire.Op {
	return &wire.Op{ID: wire.OpID{Session: txnSession, Seq: seq}, Kind: wire.Txn, Value: wire.AppendTxn(nil, t)}
}

// runTxn applies the transaction at slot, as a new operation whose
// sequence number is the slot, and decodes its result.
func runTxn(t *testing.T, s *Store, slot uint64, tx *wire.Transaction) *wire.TxnResult {
	t.Helper()
	res, dup := s.Apply(slot, txn(slot, tx), 0)
	require.False(t, dup)
	require.Equal(t, slot, res.Slot)
	r, err := wire.DecodeTxnResult(res.Value)
	require.NoError(t, err)
	require.Equal(t, r.Succeeded, res.Found, "Found is whether the compares held")
	return r
}

func getOp(key, end string) wire.TxnOp { return wire.TxnOp{Kind: wire.Get, Key: key, End: end} }

func putOp(key, value string) wire.TxnOp {
	return wire.TxnOp{Kind: wire.Put, Key: key, Value: []byte(value)}
}

func delOp(key, end string) wire.TxnOp { return wire.TxnOp{Kind: wire.Delete, Key: key, End: end} }

// compareFixture holds "a", created at 2 with "x", written again at 5
// with "y" (create 2, mod 5, version 2), and "c"; "b" is absent, deleted
// at 4.
func compareFixture() *Store {
	s := New()
	s.Apply(2, putKey(2, "a", "x"), 0)
	s.Apply(3, putKey(3, "b", "gone"), 0)
	s.Apply(4, delKey(4, "b"), 0)
	s.Apply(5, putKey(5, "a", "y"), 0)
	s.Apply(6, putKey(6, "c", "z"), 0)
	return s
}

// TestTxnCompares: each target and result, on a key that is there and on
// one that is not (empty value, zero numbers), with the operand on the
// right; several compares must all hold, and none always holds.
func TestTxnCompares(t *testing.T) {
	value := func(key string, r wire.CompareResult, v string) wire.Compare {
		return wire.Compare{Key: key, Target: wire.CompareValue, Result: r, Value: []byte(v)}
	}
	number := func(key string, target wire.CompareTarget, r wire.CompareResult, n uint64) wire.Compare {
		return wire.Compare{Key: key, Target: target, Result: r, Number: n}
	}
	cases := []struct {
		name  string
		cmps  []wire.Compare
		holds bool
	}{
		{"no compare", nil, true},
		{"value equal", []wire.Compare{value("a", wire.Equal, "y")}, true},
		{"value equal, the old value", []wire.Compare{value("a", wire.Equal, "x")}, false},
		{"value not equal", []wire.Compare{value("a", wire.NotEqual, "x")}, true},
		{"value not equal, same", []wire.Compare{value("a", wire.NotEqual, "y")}, false},
		{"value less", []wire.Compare{value("a", wire.Less, "z")}, true},
		{"value less, a prefix is less", []wire.Compare{value("a", wire.Less, "yy")}, true},
		{"value less, equal", []wire.Compare{value("a", wire.Less, "y")}, false},
		{"value greater", []wire.Compare{value("a", wire.Greater, "x")}, true},
		{"value greater, longer", []wire.Compare{value("a", wire.Greater, "yy")}, false},
		{"value greater, bytewise", []wire.Compare{value("a", wire.Greater, "Y\xff")}, true},
		// As etcd: a value compare on an absent key fails, whatever it asks.
		{"absent value equal empty", []wire.Compare{value("b", wire.Equal, "")}, false},
		{"absent value not equal empty", []wire.Compare{value("b", wire.NotEqual, "")}, false},
		{"absent value less", []wire.Compare{value("b", wire.Less, "\x00")}, false},
		{"absent value greater", []wire.Compare{value("b", wire.Greater, "")}, false},
		{"absent value not equal x", []wire.Compare{value("b", wire.NotEqual, "x")}, false},
		{"never written value", []wire.Compare{value("nope", wire.Equal, "")}, false},
		{"version equal", []wire.Compare{number("a", wire.CompareVersion, wire.Equal, 2)}, true},
		{"version not equal", []wire.Compare{number("a", wire.CompareVersion, wire.NotEqual, 2)}, false},
		{"version less", []wire.Compare{number("a", wire.CompareVersion, wire.Less, 3)}, true},
		{"version less, equal", []wire.Compare{number("a", wire.CompareVersion, wire.Less, 2)}, false},
		{"version greater", []wire.Compare{number("a", wire.CompareVersion, wire.Greater, 1)}, true},
		{"absent version equal 0", []wire.Compare{number("b", wire.CompareVersion, wire.Equal, 0)}, true},
		{"absent version greater 0", []wire.Compare{number("b", wire.CompareVersion, wire.Greater, 0)}, false},
		{"create equal", []wire.Compare{number("a", wire.CompareCreate, wire.Equal, 2)}, true},
		{"create equal, the last write", []wire.Compare{number("a", wire.CompareCreate, wire.Equal, 5)}, false},
		{"create less", []wire.Compare{number("a", wire.CompareCreate, wire.Less, 3)}, true},
		{"create greater", []wire.Compare{number("a", wire.CompareCreate, wire.Greater, 2)}, false},
		{"create not equal", []wire.Compare{number("c", wire.CompareCreate, wire.NotEqual, 6)}, false},
		{"absent create equal 0", []wire.Compare{number("b", wire.CompareCreate, wire.Equal, 0)}, true},
		{"absent create less 1", []wire.Compare{number("b", wire.CompareCreate, wire.Less, 1)}, true},
		{"mod equal", []wire.Compare{number("a", wire.CompareMod, wire.Equal, 5)}, true},
		{"mod greater", []wire.Compare{number("a", wire.CompareMod, wire.Greater, 4)}, true},
		{"mod less, equal", []wire.Compare{number("a", wire.CompareMod, wire.Less, 5)}, false},
		{"mod not equal", []wire.Compare{number("a", wire.CompareMod, wire.NotEqual, 2)}, true},
		{"absent mod equal 0", []wire.Compare{number("b", wire.CompareMod, wire.Equal, 0)}, true},
		{"absent mod not equal 0", []wire.Compare{number("b", wire.CompareMod, wire.NotEqual, 0)}, false},
		{"all hold", []wire.Compare{value("a", wire.Equal, "y"), number("a", wire.CompareVersion, wire.Equal, 2),
			number("b", wire.CompareCreate, wire.Equal, 0)}, true},
		{"the last fails", []wire.Compare{value("a", wire.Equal, "y"), number("c", wire.CompareMod, wire.Greater, 6)}, false},
		{"the first fails", []wire.Compare{value("c", wire.Equal, "y"), number("a", wire.CompareMod, wire.Equal, 5)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := compareFixture()
			before := versions(s)
			tx := &wire.Transaction{Compares: c.cmps,
				Then: []wire.TxnOp{putOp("then", "t"), getOp("a", "")},
				Else: []wire.TxnOp{putOp("else", "e")}}
			r := runTxn(t, s, 10, tx)
			require.Equal(t, c.holds, r.Succeeded)
			_, then := s.Read("then")
			_, els := s.Read("else")
			require.Equal(t, c.holds, then, "Then ran")
			require.Equal(t, !c.holds, els, "Else ran")
			if c.holds {
				require.Equal(t, []wire.TxnOpResult{{}, {KVs: []wire.KeyValue{kv("a", "y", 2, 5, 2)}, Count: 1}}, r.Results)
			} else {
				require.Equal(t, []wire.TxnOpResult{{}}, r.Results)
			}
			after := slices.DeleteFunc(versions(s), func(kv wire.KeyValue) bool { return kv.Key == "then" || kv.Key == "else" })
			require.Equal(t, before, after, "the compares changed nothing")
		})
	}
}

// rangeFixture holds "", "a", "ab", "b", "c", "d" and a long key, and
// "\xff", created at slots 1 to 8 ("b" written again at 9).
var rangeFixtureKeys = []string{"", "a", "ab", "b", "c", "d", "d long key past the head's 16 bytes", "\xff"}

func rangeFixture() *Store {
	s := New()
	for i, k := range rangeFixtureKeys {
		s.Apply(uint64(i+1), putKey(uint64(i+1), k, "v"+k), 0)
	}
	s.Apply(9, putKey(9, "b", "vb2"), 0)
	return s
}

// fixtureKV is the range fixture's version of key.
func fixtureKV(key string) wire.KeyValue {
	if key == "b" {
		return kv("b", "vb2", 4, 9, 2)
	}
	at := uint64(slices.Index(rangeFixtureKeys, key) + 1)
	return kv(key, "v"+key, at, at, 1)
}

func fixtureKVs(keys ...string) []wire.KeyValue {
	var kvs []wire.KeyValue
	for _, k := range keys {
		kvs = append(kvs, fixtureKV(k))
	}
	return kvs
}

// TestTxnRange: a range read's keys, single, in a range with an explicit
// end or from a key on, with a limit (Count counts every key, More says
// some were left out), keys alone or a count alone.
func TestTxnRange(t *testing.T) {
	all := rangeFixtureKeys
	keysOnly := func(kvs []wire.KeyValue) []wire.KeyValue {
		for i := range kvs {
			kvs[i].Value = nil
		}
		return kvs
	}
	cases := []struct {
		name string
		op   wire.TxnOp
		want wire.TxnOpResult
	}{
		{"one key", getOp("ab", ""), wire.TxnOpResult{KVs: fixtureKVs("ab"), Count: 1}},
		{"the empty key", getOp("", ""), wire.TxnOpResult{KVs: fixtureKVs(""), Count: 1}},
		{"an absent key", getOp("abc", ""), wire.TxnOpResult{}},
		{"a prefix", getOp("a", "b"), wire.TxnOpResult{KVs: fixtureKVs("a", "ab"), Count: 2}},
		{"an explicit end", getOp("ab", "d"), wire.TxnOpResult{KVs: fixtureKVs("ab", "b", "c"), Count: 3}},
		{"from a key on", getOp("c", NoEnd), wire.TxnOpResult{KVs: fixtureKVs(all[4:]...), Count: 4}},
		{"every key", getOp("", NoEnd), wire.TxnOpResult{KVs: fixtureKVs(all...), Count: 8}},
		{"from an absent key on", getOp("bb", NoEnd), wire.TxnOpResult{KVs: fixtureKVs(all[4:]...), Count: 4}},
		{"an end before the start", getOp("c", "b"), wire.TxnOpResult{}},
		{"an empty range", getOp("b", "b"), wire.TxnOpResult{}},
		{"no key in the range", getOp("bb", "bc"), wire.TxnOpResult{}},
		{"a limit", wire.TxnOp{Kind: wire.Get, Key: "", End: NoEnd, Limit: 3},
			wire.TxnOpResult{KVs: fixtureKVs(all[:3]...), Count: 8, More: true}},
		{"a limit of one", wire.TxnOp{Kind: wire.Get, Key: "a", End: "c", Limit: 1},
			wire.TxnOpResult{KVs: fixtureKVs("a"), Count: 3, More: true}},
		{"a limit of the count", wire.TxnOp{Kind: wire.Get, Key: "a", End: "c", Limit: 3},
			wire.TxnOpResult{KVs: fixtureKVs("a", "ab", "b"), Count: 3}},
		{"a limit past the count", wire.TxnOp{Kind: wire.Get, Key: "a", End: "c", Limit: 30},
			wire.TxnOpResult{KVs: fixtureKVs("a", "ab", "b"), Count: 3}},
		{"a limit on one key", wire.TxnOp{Kind: wire.Get, Key: "a", Limit: 1}, wire.TxnOpResult{KVs: fixtureKVs("a"), Count: 1}},
		{"keys only", wire.TxnOp{Kind: wire.Get, Key: "a", End: "c", KeysOnly: true},
			wire.TxnOpResult{KVs: keysOnly(fixtureKVs("a", "ab", "b")), Count: 3}},
		{"keys only, a limit", wire.TxnOp{Kind: wire.Get, Key: "c", End: NoEnd, KeysOnly: true, Limit: 2},
			wire.TxnOpResult{KVs: keysOnly(fixtureKVs("c", "d")), Count: 4, More: true}},
		{"count only", wire.TxnOp{Kind: wire.Get, Key: "", End: NoEnd, CountOnly: true}, wire.TxnOpResult{Count: 8}},
		{"count only, a limit", wire.TxnOp{Kind: wire.Get, Key: "", End: NoEnd, CountOnly: true, Limit: 2},
			wire.TxnOpResult{Count: 8}},
		{"count only, keys only", wire.TxnOp{Kind: wire.Get, Key: "a", End: "b", CountOnly: true, KeysOnly: true},
			wire.TxnOpResult{Count: 2}},
		{"count only, one key", wire.TxnOp{Kind: wire.Get, Key: "c", CountOnly: true}, wire.TxnOpResult{Count: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := rangeFixture()
			digest := s.Digest()
			r := runTxn(t, s, 10, &wire.Transaction{Then: []wire.TxnOp{c.op}})
			require.True(t, r.Succeeded)
			require.Equal(t, []wire.TxnOpResult{c.want}, r.Results)
			require.Equal(t, digest, s.Digest(), "a read changes nothing")
		})
	}
}

// TestTxnPutPrevKV: a put reports the version it overwrote when asked,
// nothing for a key that was absent, and leaves the key at the
// transaction's slot.
func TestTxnPutPrevKV(t *testing.T) {
	s := compareFixture()
	prev := func(key, value string) wire.TxnOp {
		return wire.TxnOp{Kind: wire.Put, Key: key, Value: []byte(value), PrevKV: true}
	}
	r := runTxn(t, s, 10, &wire.Transaction{Then: []wire.TxnOp{prev("a", "new"), prev("b", "new"), putOp("c", "new"), prev("d", "")}})
	require.Equal(t, []wire.TxnOpResult{{KVs: []wire.KeyValue{kv("a", "y", 2, 5, 2)}}, {}, {}, {}}, r.Results)
	require.Equal(t, []wire.KeyValue{kv("a", "new", 2, 10, 3), kv("b", "new", 10, 10, 1), kv("c", "new", 6, 10, 2), kv("d", "", 10, 10, 1)},
		versions(s))
	r = runTxn(t, s, 11, &wire.Transaction{Then: []wire.TxnOp{prev("d", "x")}})
	require.Equal(t, []wire.TxnOpResult{{KVs: []wire.KeyValue{kv("d", "", 10, 10, 1)}}}, r.Results, "an empty value")
}

// TestTxnDelete: a range delete removes the keys in its range and counts
// them; asked, it reports their versions in key order. The digest is a
// store's that deleted them one by one.
func TestTxnDelete(t *testing.T) {
	all := rangeFixtureKeys
	cases := []struct {
		name   string
		op     wire.TxnOp
		gone   []string
		prevKV bool
	}{
		{"one key", delOp("ab", ""), []string{"ab"}, false},
		{"one key, prev", wire.TxnOp{Kind: wire.Delete, Key: "b", PrevKV: true}, []string{"b"}, true},
		{"the empty key", delOp("", ""), []string{""}, false},
		{"an absent key", wire.TxnOp{Kind: wire.Delete, Key: "bb", PrevKV: true}, nil, true},
		{"a prefix", delOp("a", "b"), []string{"a", "ab"}, false},
		{"a prefix, prev", wire.TxnOp{Kind: wire.Delete, Key: "a", End: "b", PrevKV: true}, []string{"a", "ab"}, true},
		{"an explicit end", wire.TxnOp{Kind: wire.Delete, Key: "ab", End: "d", PrevKV: true}, []string{"ab", "b", "c"}, true},
		{"from a key on", wire.TxnOp{Kind: wire.Delete, Key: "c", End: NoEnd, PrevKV: true}, all[4:], true},
		{"every key", delOp("", NoEnd), all, false},
		{"every key, prev", wire.TxnOp{Kind: wire.Delete, Key: "", End: NoEnd, PrevKV: true}, all, true},
		{"an empty range", wire.TxnOp{Kind: wire.Delete, Key: "bb", End: "bc", PrevKV: true}, nil, true},
		{"an end before the start", delOp("c", "a"), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, oneByOne := rangeFixture(), rangeFixture()
			r := runTxn(t, s, 10, &wire.Transaction{Then: []wire.TxnOp{c.op, getOp("", NoEnd)}})
			want := wire.TxnOpResult{Deleted: uint64(len(c.gone))}
			if c.prevKV {
				want.KVs = fixtureKVs(c.gone...)
			}
			require.Equal(t, want, r.Results[0])
			var left []wire.KeyValue
			for _, k := range all {
				if !slices.Contains(c.gone, k) {
					left = append(left, fixtureKV(k))
				}
			}
			require.Equal(t, left, r.Results[1].KVs, "a later read of the transaction sees the deletion")
			require.Equal(t, left, versions(s))
			require.Equal(t, len(left), s.Len())
			for i, k := range c.gone {
				oneByOne.Apply(uint64(20+i), delKey(uint64(20+i), k), 0)
			}
			require.Equal(t, oneByOne.Digest(), s.Digest())
			checkChunks(t, s)
		})
	}
}

// TestTxnSeesItsOwnWrites: each operation of a branch sees what the
// earlier ones wrote, all of them at the transaction's slot.
func TestTxnSeesItsOwnWrites(t *testing.T) {
	s := compareFixture()
	r := runTxn(t, s, 10, &wire.Transaction{
		Compares: []wire.Compare{{Key: "a", Target: wire.CompareVersion, Result: wire.Equal, Number: 2}},
		Then: []wire.TxnOp{
			{Kind: wire.Get, Key: "", End: NoEnd, KeysOnly: true},
			putOp("a", "1"),
			putOp("b", "2"),
			getOp("a", "c"),
			{Kind: wire.Delete, Key: "c", PrevKV: true},
			{Kind: wire.Get, Key: "", End: NoEnd, CountOnly: true},
			{Kind: wire.Delete, Key: "c", End: NoEnd, PrevKV: true},
			getOp("", NoEnd),
		},
	})
	require.True(t, r.Succeeded)
	require.Equal(t, []wire.TxnOpResult{
		{KVs: []wire.KeyValue{kv("a", "", 2, 5, 2), kv("c", "", 6, 6, 1)}, Count: 2},
		{},
		{},
		{KVs: []wire.KeyValue{kv("a", "1", 2, 10, 3), kv("b", "2", 10, 10, 1)}, Count: 2},
		{KVs: []wire.KeyValue{kv("c", "z", 6, 6, 1)}, Deleted: 1},
		{Count: 2},
		{},
		{KVs: []wire.KeyValue{kv("a", "1", 2, 10, 3), kv("b", "2", 10, 10, 1)}, Count: 2},
	}, r.Results)
}

// TestTxnAppliedOnce: a transaction applied again (its OpID logged twice)
// is answered from the session table with the result it had, and does
// not run again; the result holds no byte of the store's, which later
// writes and the reclaiming of their chunks leave as it was.
func TestTxnAppliedOnce(t *testing.T) {
	s := New()
	s.Apply(1, putKey(1, "k", "first"), 0)
	op := txn(2, &wire.Transaction{Then: []wire.TxnOp{getOp("k", ""), {Kind: wire.Put, Key: "k", Value: []byte("second"), PrevKV: true}}})
	res, dup := s.Apply(2, op, 0)
	require.False(t, dup)
	kept := bytes.Clone(res.Value)
	digest := s.Digest()
	again, dup := s.Apply(3, op, 0)
	require.True(t, dup)
	require.Equal(t, res, again)
	require.Equal(t, digest, s.Digest(), "it did not run again")
	v, _ := s.Read("k")
	require.Equal(t, Version{[]byte("second"), 2, 1, 2}, v)

	// Overwrite the key until the chunk its first value was in is dropped.
	big := bytes.Repeat([]byte("v"), 1000)
	for slot := uint64(4); slot < 4+4*chunkSize/1000; slot++ {
		s.Apply(slot, &wire.Op{ID: wire.OpID{Session: 1, Seq: slot}, Kind: wire.Put, Key: "k", Value: big}, slot)
	}
	r, outcome := s.Lookup(op.ID)
	require.Equal(t, Applied, outcome)
	require.Equal(t, kept, r.Value)
	got, err := wire.DecodeTxnResult(r.Value)
	require.NoError(t, err)
	require.Equal(t, []wire.TxnOpResult{{KVs: []wire.KeyValue{kv("k", "first", 1, 1, 1)}, Count: 1},
		{KVs: []wire.KeyValue{kv("k", "first", 1, 1, 1)}}}, got.Results)
}

// TestTxnBadProgram: a program that does not decode, or that Validate
// refuses, changes nothing, and its result, not Found and no Value, is
// kept as any other's.
func TestTxnBadProgram(t *testing.T) {
	for name, program := range map[string][]byte{
		"garbage":     []byte("\xff\xff\xff"),
		"empty":       nil,
		"trailing":    append(wire.AppendTxn(nil, &wire.Transaction{Then: []wire.TxnOp{putOp("a", "b")}}), 0),
		"puts twice":  wire.AppendTxn(nil, &wire.Transaction{Then: []wire.TxnOp{putOp("a", "1"), putOp("a", "2")}}),
		"nested":      wire.AppendTxn(nil, &wire.Transaction{Else: []wire.TxnOp{{Kind: wire.Txn}}}),
		"bad compare": wire.AppendTxn(nil, &wire.Transaction{Compares: []wire.Compare{{Key: "a", Target: 9}}}),
	} {
		s := compareFixture()
		digest, kvs := s.Digest(), versions(s)
		op := &wire.Op{ID: wire.OpID{Session: 1, Seq: 1}, Kind: wire.Txn, Value: program}
		res, dup := s.Apply(7, op, 0)
		require.False(t, dup, name)
		require.Equal(t, Result{Slot: 7}, res, name)
		require.Equal(t, digest, s.Digest(), name)
		require.Equal(t, kvs, versions(s), name)
		again, dup := s.Apply(8, op, 0)
		require.True(t, dup, name)
		require.Equal(t, res, again, name)
	}
}

// TestTxnWhileFrozen: transactions that read, overwrite, create and
// delete keys, in ranges that take in keys of the frozen table, keys
// overwritten or deleted since the freeze and keys created since, while a
// view is frozen: each result is the one a store never frozen gives, and
// so is the state after the thaw; the view holds the state at the freeze.
func TestTxnWhileFrozen(t *testing.T) {
	frozen, plain := New(), New()
	both := func(slot uint64, op *wire.Op) {
		r1, _ := frozen.Apply(slot, op, 0)
		r2, _ := plain.Apply(slot, op, 0)
		require.Equal(t, r2, r1, "slot %d", slot)
	}
	for i, k := range []string{"a", "b", "c", "d", "e", "f"} {
		both(uint64(i+1), putKey(uint64(i+1), k, "old "+k))
	}
	atFreeze := versions(frozen)
	f := frozen.Freeze()
	both(7, putKey(7, "b", "new b"))  // overwritten in the overlay
	both(8, delKey(8, "c"))           // a tombstone
	both(9, putKey(9, "bb", "new"))   // created in the overlay
	both(10, putKey(10, "z", "new"))  // created past the table's keys
	both(11, putKey(11, "d", "d2"))   // overwritten, then deleted by the transaction below
	both(12, putKey(12, "cc", "cc"))  // created, then deleted by the transaction below
	both(13, delKey(13, "e"))         // deleted, then created again below
	both(14, putKey(14, "ee", "ee2")) // created, then overwritten below
	everything := wire.TxnOp{Kind: wire.Get, Key: "", End: NoEnd}
	steps := []*wire.Transaction{
		{Then: []wire.TxnOp{everything, {Kind: wire.Get, Key: "b", End: "d", Limit: 2}, {Kind: wire.Get, Key: "", End: NoEnd, CountOnly: true}}},
		{
			Compares: []wire.Compare{
				{Key: "c", Target: wire.CompareVersion, Result: wire.Equal, Number: 0},
				{Key: "b", Target: wire.CompareCreate, Result: wire.Equal, Number: 2},
				{Key: "b", Target: wire.CompareMod, Result: wire.Equal, Number: 7},
				{Key: "bb", Target: wire.CompareValue, Result: wire.Equal, Value: []byte("new")},
			},
			Then: []wire.TxnOp{
				{Kind: wire.Delete, Key: "c", End: "e", PrevKV: true},
				{Kind: wire.Put, Key: "e", Value: []byte("e again"), PrevKV: true},
				{Kind: wire.Put, Key: "ee", Value: []byte("ee3"), PrevKV: true},
				{Kind: wire.Put, Key: "a", Value: []byte("a2"), PrevKV: true},
				everything,
			},
		},
		{Then: []wire.TxnOp{{Kind: wire.Delete, Key: "bb", End: "", PrevKV: true}, {Kind: wire.Delete, Key: "y", End: NoEnd, PrevKV: true}, everything}},
		{Then: []wire.TxnOp{putOp("bb", "back"), putOp("c", "back"), everything}},
	}
	for i, tx := range steps {
		slot := uint64(20 + i)
		both(slot, txn(slot, tx))
		require.Equal(t, versions(plain), versions(frozen), "after slot %d", slot)
		require.Equal(t, plain.Len(), frozen.Len())
		require.Equal(t, plain.Digest(), frozen.Digest())
	}
	r, err := wire.DecodeTxnResult(frozen.sessions[txnSession].results[21].Value)
	require.NoError(t, err)
	require.True(t, r.Succeeded)
	require.Equal(t, wire.TxnOpResult{KVs: []wire.KeyValue{kv("cc", "cc", 12, 12, 1), kv("d", "d2", 4, 11, 2)}, Deleted: 2}, r.Results[0])
	require.Equal(t, []wire.TxnOpResult{{}, {KVs: []wire.KeyValue{kv("ee", "ee2", 14, 14, 1)}}, {KVs: []wire.KeyValue{kv("a", "old a", 1, 1, 1)}}},
		r.Results[1:4])

	snap := f.Encode()
	frozen.Thaw()
	require.Nil(t, frozen.overlay)
	require.Equal(t, versions(plain), versions(frozen))
	require.Equal(t, plain.Digest(), frozen.Digest())
	checkChunks(t, frozen)
	atSnap, err := Restore(snap)
	require.NoError(t, err)
	require.Equal(t, atFreeze, versions(atSnap))
	both(30, txn(30, &wire.Transaction{Then: []wire.TxnOp{{Kind: wire.Delete, Key: "", End: NoEnd, PrevKV: true}}}))
	require.Zero(t, frozen.Len())
	checkChunks(t, frozen)
}

// model is a reference store for transactions: a map, each key's
// revisions kept as etcd defines them.
type model map[string]wire.KeyValue

func (m model) put(slot uint64, key string, value []byte) {
	kv, ok := m[key]
	if !ok {
		kv = wire.KeyValue{Key: key, Create: slot}
	}
	kv.Value, kv.Mod, kv.Version = bytes.Clone(value), slot, kv.Version+1
	if len(kv.Value) == 0 {
		kv.Value = nil
	}
	m[key] = kv
}

func (m model) keys(key, end string) []string {
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if end == "" && k == key || end == NoEnd && k >= key || end != "" && k >= key && k < end {
			keys = append(keys, k)
		}
	}
	return keys
}

func (m model) txn(slot uint64, t *wire.Transaction) *wire.TxnResult {
	res := &wire.TxnResult{Succeeded: true}
	for _, c := range t.Compares {
		kv, present := m[c.Key]
		if !present && c.Target == wire.CompareValue {
			res.Succeeded = false // etcd's rule for a value compare on an absent key
			break
		}
		var order int
		switch c.Target {
		case wire.CompareValue:
			order = bytes.Compare(kv.Value, c.Value)
		case wire.CompareVersion:
			order = cmp.Compare(kv.Version, c.Number)
		case wire.CompareCreate:
			order = cmp.Compare(kv.Create, c.Number)
		case wire.CompareMod:
			order = cmp.Compare(kv.Mod, c.Number)
		}
		if !map[wire.CompareResult]bool{wire.Equal: order == 0, wire.NotEqual: order != 0, wire.Less: order < 0, wire.Greater: order > 0}[c.Result] {
			res.Succeeded = false
		}
	}
	ops := t.Then
	if !res.Succeeded {
		ops = t.Else
	}
	for _, o := range ops {
		var r wire.TxnOpResult
		switch o.Kind {
		case wire.Get:
			keys := m.keys(o.Key, o.End)
			r.Count = uint64(len(keys))
			if !o.CountOnly {
				if o.Limit > 0 && uint64(len(keys)) > o.Limit {
					keys, r.More = keys[:o.Limit], true
				}
				for _, k := range keys {
					kv := m[k]
					if o.KeysOnly {
						kv.Value = nil
					}
					r.KVs = append(r.KVs, kv)
				}
			}
		case wire.Put:
			if kv, ok := m[o.Key]; ok && o.PrevKV {
				r.KVs = []wire.KeyValue{kv}
			}
			m.put(slot, o.Key, o.Value)
		case wire.Delete:
			for _, k := range m.keys(o.Key, o.End) {
				if o.PrevKV {
					r.KVs = append(r.KVs, m[k])
				}
				delete(m, k)
				r.Deleted++
			}
		}
		res.Results = append(res.Results, r)
	}
	return res
}

// TestTxnMatchesAModel: random transactions, puts and deletes on a few
// keys, short and long, with views frozen and thawed now and then, on
// two stores, one never frozen: both give a reference map's results,
// byte for byte the same, and hold its contents, a snapshot of them too.
func TestTxnMatchesAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	keys := []string{"", "\x00", "a", "ab", "abc", "b", "ba", "c", "\xff", "a shared prefix longer than 16 bytes 1",
		"a shared prefix longer than 16 bytes 2", "sixteen byte key"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	end := func(start string) string {
		switch rng.IntN(4) {
		case 0:
			return ""
		case 1:
			return NoEnd
		case 2:
			return start + "\x00" // start alone, as a range
		}
		return key()
	}
	value := func() []byte { return []byte([]string{"", "x", "y", "yy"}[rng.IntN(4)]) }
	program := func(slot uint64) *wire.Transaction {
		t := new(wire.Transaction)
		for range rng.IntN(3) {
			t.Compares = append(t.Compares, wire.Compare{Key: key(), Target: wire.CompareTarget(rng.IntN(4)),
				Result: wire.CompareResult(rng.IntN(4)), Value: value(), Number: rng.Uint64N(slot + 1)})
		}
		for _, branch := range []*[]wire.TxnOp{&t.Then, &t.Else} {
			for range rng.IntN(4) {
				k := key()
				o := wire.TxnOp{Kind: wire.OpKind(rng.IntN(3)), Key: k, PrevKV: rng.IntN(2) == 0}
				switch o.Kind {
				case wire.Put:
					o.Value = value()
				case wire.Get:
					o.End, o.Limit, o.KeysOnly, o.CountOnly = end(k), rng.Uint64N(4), rng.IntN(4) == 0, rng.IntN(4) == 0
				case wire.Delete:
					o.End = end(k)
				}
				*branch = append(*branch, o)
			}
		}
		return t
	}
	m := make(model)
	s, plain := New(), New()
	var f *Frozen
	ran := 0
	for slot := uint64(1); slot <= 6000; slot++ {
		var op *wire.Op
		switch rng.IntN(4) {
		case 0:
			k, v := key(), value()
			op = &wire.Op{ID: wire.OpID{Session: 1, Seq: slot}, Kind: wire.Put, Key: k, Value: v}
			m.put(slot, k, v)
		case 1:
			k := key()
			op = delKey(slot, k)
			delete(m, k)
		default:
			tx := program(slot)
			if tx.Validate() != nil {
				continue // writes a key twice
			}
			op = txn(slot, tx)
			want := m.txn(slot, tx)
			res, _ := s.Apply(slot, op, slot)
			got, err := wire.DecodeTxnResult(res.Value)
			require.NoError(t, err)
			require.Equal(t, want, got, "slot %d: %+v", slot, tx)
			ran++
		}
		if op.Kind != wire.Txn {
			s.Apply(slot, op, slot)
		}
		res, _ := plain.Apply(slot, op, slot)
		mine, _ := s.Lookup(op.ID)
		require.Equal(t, res, mine, "slot %d", slot)
		switch slot % 500 {
		case 100:
			f = s.Freeze()
		case 400:
			f.Encode()
			s.Thaw()
		}
		if slot%100 == 0 {
			var want []wire.KeyValue
			for _, k := range slices.Sorted(maps.Keys(m)) {
				want = append(want, m[k])
			}
			require.Equal(t, want, versions(s), "slot %d", slot)
			require.Equal(t, want, versions(plain), "slot %d", slot)
			require.Equal(t, plain.Digest(), s.Digest())
			require.Equal(t, len(m), s.Len())
		}
	}
	require.Greater(t, ran, 2000)
	r, err := Restore(s.Snapshot())
	require.NoError(t, err)
	require.Equal(t, versions(plain), versions(r))
	require.Equal(t, plain.Digest(), r.Digest())
	checkChunks(t, s)
}

// BenchmarkTxnOnStore applies transactions of three operations to a
// million-key store: a compare of one key's last write, then a read of it
// and writes of two others, each a 100-byte value, uniformly random keys.
func BenchmarkTxnOnStore(b *testing.B) {
	s := preloaded()
	keys := benchKeyNames()
	rng := rand.New(rand.NewPCG(1, 2))
	programs := make([][]byte, 4096)
	value := make([]byte, 100)
	for i := range programs {
		k1, k2, k3 := keys[rng.Uint64N(benchKeys)], keys[rng.Uint64N(benchKeys)], keys[rng.Uint64N(benchKeys)]
		if k2 == k3 {
			k3 = k2 + "x"
		}
		programs[i] = wire.AppendTxn(nil, &wire.Transaction{
			Compares: []wire.Compare{{Key: k1, Target: wire.CompareMod, Result: wire.Greater, Number: 0}},
			Then:     []wire.TxnOp{{Kind: wire.Get, Key: k1}, {Kind: wire.Put, Key: k2, Value: value}, {Kind: wire.Put, Key: k3, Value: value}},
		})
	}
	slot, seq := uint64(benchKeys), uint64(benchKeys)
	b.ResetTimer()
	defer measureCPU(b)()
	for b.Loop() {
		slot++
		seq++
		op := wire.Op{ID: wire.OpID{Session: seq%24 + 1, Seq: seq/24 + 1}, Kind: wire.Txn, Value: programs[seq%uint64(len(programs))]}
		if res, _ := s.Apply(slot, &op, seq/24); !res.Found {
			b.Fatalf("the compare failed at slot %d", slot)
		}
	}
}
