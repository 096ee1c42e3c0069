package wire

import (
	"reflect"
	"strings"
	"testing"
)

func sampleTxn() *Transaction {
	return &Transaction{
		Compares: []Compare{
			{Key: "a", Target: CompareValue, Result: Equal, Value: []byte("x")},
			{Key: "b\x00\xff", Target: CompareMod, Result: Less, Number: 1 << 40},
		},
		Then: []TxnOp{
			{Kind: Put, Key: "a", Value: []byte("y"), PrevKV: true},
			{Kind: Get, Key: "a", End: "b", Limit: 7, KeysOnly: true},
		},
		Else: []TxnOp{{Kind: Delete, Key: "", End: "\x00", PrevKV: true}, {Kind: Get, Key: "z", CountOnly: true}},
	}
}

func TestTxnRoundTrip(t *testing.T) {
	for _, txn := range []*Transaction{sampleTxn(), {}} {
		got, err := DecodeTxn(AppendTxn(nil, txn))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, txn) {
			t.Fatalf("round trip: got %+v, want %+v", got, txn)
		}
	}
	res := &TxnResult{Succeeded: true, Results: []TxnOpResult{
		{KVs: []KeyValue{{Key: "a", Value: []byte("x"), Create: 3, Mod: 9, Version: 4}}, Count: 12, More: true},
		{Deleted: 2},
	}}
	got, err := DecodeTxnResult(AppendTxnResult(nil, res))
	if err != nil || !reflect.DeepEqual(got, res) {
		t.Fatalf("result round trip: got %+v, %v; want %+v", got, err, res)
	}
}

// TestTxnRefusesWhatNoReplicaShouldRun: bad kinds, targets, flags, a put
// with a range end, a nested transaction and trailing bytes are errors.
func TestTxnRefusesWhatNoReplicaShouldRun(t *testing.T) {
	bad := []*Transaction{
		{Then: []TxnOp{{Kind: Txn, Key: "a"}}},
		{Else: []TxnOp{{Kind: OpKind(99), Key: "a"}}},
		{Then: []TxnOp{{Kind: Put, Key: "a", End: "b"}}},
		{Compares: []Compare{{Key: "a", Target: maxCompareTarget + 1}}},
		{Compares: []Compare{{Key: "a", Result: maxCompareResult + 1}}},
	}
	bad = append(bad, writesTwice()...)
	for _, txn := range bad {
		if txn.Validate() == nil {
			t.Errorf("%+v validated", txn)
		}
		if _, err := DecodeTxn(AppendTxn(nil, txn)); err == nil {
			t.Errorf("%+v decoded", txn)
		}
	}
	b := AppendTxn(nil, sampleTxn())
	if _, err := DecodeTxn(append(b, 0)); err == nil {
		t.Error("trailing byte accepted")
	}
	for i := range b {
		if _, err := DecodeTxn(b[:i]); err == nil {
			t.Errorf("truncation at %d of %d accepted", i, len(b))
		}
	}
	ops := AppendTxn(nil, &Transaction{Then: []TxnOp{{Kind: Get, Key: "a"}}})
	ops[3] = 0xf0 // after the counts of compares and operations and the kind: the flags
	if _, err := DecodeTxn(ops); err == nil {
		t.Error("unknown operation flags accepted")
	}
	if !(&Op{Kind: Txn}).Conflicts(&Op{Kind: Get, Key: "q"}) || !(&Op{Kind: Get, Key: "q"}).Conflicts(&Op{Kind: Txn}) {
		t.Error("a transaction does not conflict with a read of another key")
	}
}

func FuzzTxn(f *testing.F) {
	f.Add(AppendTxn(nil, sampleTxn()))
	f.Add(AppendTxnResult(nil, &TxnResult{Succeeded: true, Results: []TxnOpResult{{Count: 1}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if txn, err := DecodeTxn(b); err == nil {
			again, err := DecodeTxn(AppendTxn(nil, txn))
			if err != nil || !reflect.DeepEqual(again, txn) {
				t.Fatalf("re-encoding %+v: %+v, %v", txn, again, err)
			}
		}
		if res, err := DecodeTxnResult(b); err == nil {
			again, err := DecodeTxnResult(AppendTxnResult(nil, res))
			if err != nil || !reflect.DeepEqual(again, res) {
				t.Fatalf("re-encoding %+v: %+v, %v", res, again, err)
			}
		}
	})
}

// writesTwice are programs whose branch writes a key twice.
func writesTwice() []*Transaction {
	put := func(k string) TxnOp { return TxnOp{Kind: Put, Key: k, Value: []byte("v")} }
	del := func(k, end string) TxnOp { return TxnOp{Kind: Delete, Key: k, End: end} }
	return []*Transaction{
		{Then: []TxnOp{put("a"), put("b"), put("a")}},
		{Else: []TxnOp{put("a"), {Kind: Get, Key: "a"}, put("a")}},
		{Then: []TxnOp{put(""), put("")}},
		{Then: []TxnOp{put("a"), del("a", "")}},
		{Then: []TxnOp{del("a", ""), put("a")}},
		{Then: []TxnOp{put("b"), del("a", "c")}},
		{Then: []TxnOp{del("a", "c"), put("a")}},
		{Then: []TxnOp{put("a"), put("zz"), del("y", "\x00")}},
		{Then: []TxnOp{del("", "\x00"), put("")}},
	}
}

// TestTxnWritesAKeyOnce: as etcd's, a branch may not put a key twice nor
// put a key a delete of its own removes (see writesTwice); one that writes
// each key once is valid, whatever it reads, and so is a key written
// once in each branch.
func TestTxnWritesAKeyOnce(t *testing.T) {
	for _, txn := range writesTwice() {
		err := txn.Validate()
		if err == nil || !strings.Contains(err.Error(), "key") {
			t.Errorf("%+v: %v", txn, err)
		}
	}
	put := func(k string) TxnOp { return TxnOp{Kind: Put, Key: k, Value: []byte("v")} }
	del := func(k, end string) TxnOp { return TxnOp{Kind: Delete, Key: k, End: end} }
	good := []*Transaction{
		{Then: []TxnOp{put("a"), {Kind: Get, Key: "a"}, put("b")}, Else: []TxnOp{put("a"), put("b")}},
		{Then: []TxnOp{put("a"), del("ab", "")}},
		{Then: []TxnOp{put("a"), put("c"), del("b", "c")}},
		{Then: []TxnOp{put("c"), del("a", "c"), del("b", "c"), del("a", "")}},
		{Then: []TxnOp{put(""), del("\x00", "\x00")}},
		{Then: []TxnOp{put("a"), del("b", "a")}}, // an empty range
		{Then: []TxnOp{del("a", ""), del("a", "b")}},
	}
	for _, txn := range good {
		if err := txn.Validate(); err != nil {
			t.Errorf("%+v: %v", txn, err)
		}
	}
}
