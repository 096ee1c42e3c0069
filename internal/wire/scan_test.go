package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func kvs(pairs ...string) []KeyValue {
	var out []KeyValue
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, KeyValue{Key: pairs[i], Value: []byte(pairs[i+1])})
	}
	return out
}

func TestScanRead(t *testing.T) {
	read := TxnOp{Key: "a", End: "m", Limit: 3, KeysOnly: true}
	op := NewScan(Weak, read)
	got, ok := ScanRead(&op)
	require.True(t, ok)
	read.Kind = Get
	assert.Equal(t, read, got)
	assert.False(t, op.Kind.IsWrite())
	assert.True(t, op.Kind.HasProgram())

	other := op
	other.Key = "b" // the program reads from "a"
	_, ok = ScanRead(&other)
	assert.False(t, ok, "a scan whose key is not its range's")
	put := Op{Kind: Scan, Key: "a", Value: AppendTxn(nil, &Transaction{Then: []TxnOp{{Kind: Put, Key: "a", Value: []byte("v")}}})}
	_, ok = ScanRead(&put)
	assert.False(t, ok, "a scan that writes")
	two := Op{Kind: Scan, Key: "a", Value: AppendTxn(nil, &Transaction{Then: []TxnOp{{Kind: Get, Key: "a"}, {Kind: Get, Key: "b"}}})}
	_, ok = ScanRead(&two)
	assert.False(t, ok, "a scan of two ranges")
	_, ok = ScanRead(&Op{Kind: Scan, Key: "a", Value: []byte{0xff}})
	assert.False(t, ok, "a program that does not decode")
}

func TestScanConflicts(t *testing.T) {
	s := NewScan(Strong, TxnOp{Key: "a", End: "c"})
	assert.True(t, s.Conflicts(&Op{Kind: Put, Key: "z"}), "a scan is ordered with every write")
	assert.False(t, s.Conflicts(&Op{Kind: Get, Key: "a"}))
	assert.True(t, s.Conflicts(&Op{Kind: Txn}))
}

// TestOverlay: a session's writes on top of a scan's answer, with limits,
// counts, deletes and keys past the answer's cut.
func TestOverlay(t *testing.T) {
	all := TxnOp{Kind: Get, Key: "a", End: "z"}
	limit2 := all
	limit2.Limit = 2
	countOnly := all
	countOnly.CountOnly = true
	keysOnly := all
	keysOnly.KeysOnly = true
	present := func(keys ...string) func(string) bool {
		return func(k string) bool {
			for _, p := range keys {
				if p == k {
					return true
				}
			}
			return false
		}
	}
	tests := []struct {
		name   string
		read   TxnOp
		r      TxnOpResult
		writes []KeyWrite
		was    func(string) bool
		want   TxnOpResult
	}{
		{"a put inserts in key order", all, TxnOpResult{KVs: kvs("b", "1", "d", "2"), Count: 2},
			[]KeyWrite{{Key: "c", Found: true, Value: []byte("x")}}, nil,
			TxnOpResult{KVs: kvs("b", "1", "c", "x", "d", "2"), Count: 3}},
		{"a put replaces, a delete removes", all, TxnOpResult{KVs: kvs("b", "1", "d", "2"), Count: 2},
			[]KeyWrite{{Key: "d", Found: true, Value: []byte("y")}, {Key: "b"}}, nil,
			TxnOpResult{KVs: kvs("d", "y"), Count: 1}},
		{"a write out of range changes nothing", all, TxnOpResult{KVs: kvs("b", "1"), Count: 1},
			[]KeyWrite{{Key: "zz", Found: true}}, nil, TxnOpResult{KVs: kvs("b", "1"), Count: 1}},
		{"a delete of an absent key changes nothing", all, TxnOpResult{KVs: kvs("b", "1"), Count: 1},
			[]KeyWrite{{Key: "c"}}, nil, TxnOpResult{KVs: kvs("b", "1"), Count: 1}},
		{"the limit cuts what a put added", limit2, TxnOpResult{KVs: kvs("b", "1", "d", "2"), Count: 3, More: true},
			[]KeyWrite{{Key: "a", Found: true, Value: []byte("x")}}, present("b", "d", "f"),
			TxnOpResult{KVs: kvs("a", "x", "b", "1"), Count: 4, More: true}},
		{"a put past the cut counts, shows nothing", limit2, TxnOpResult{KVs: kvs("b", "1", "d", "2"), Count: 3, More: true},
			[]KeyWrite{{Key: "e", Found: true, Value: []byte("x")}, {Key: "b"}}, present("b", "d", "f"),
			TxnOpResult{KVs: kvs("d", "2"), Count: 3, More: true}},
		{"a put past the cut over a present key", limit2, TxnOpResult{KVs: kvs("b", "1", "d", "2"), Count: 3, More: true},
			[]KeyWrite{{Key: "f", Found: true, Value: []byte("x")}}, present("b", "d", "f"),
			TxnOpResult{KVs: kvs("b", "1", "d", "2"), Count: 3, More: true}},
		{"a count", countOnly, TxnOpResult{Count: 2},
			[]KeyWrite{{Key: "c", Found: true}, {Key: "b"}, {Key: "q"}}, present("b", "d"), TxnOpResult{Count: 2}},
		{"keys only", keysOnly, TxnOpResult{KVs: []KeyValue{{Key: "b"}}, Count: 1},
			[]KeyWrite{{Key: "c", Found: true, Value: []byte("x")}}, nil, TxnOpResult{KVs: []KeyValue{{Key: "b"}, {Key: "c"}}, Count: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]KeyValue(nil), tc.r.KVs...)
			got := Overlay(&tc.read, tc.r, tc.writes, tc.was)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, before, tc.r.KVs, "the answer overlaid is left as it was")
		})
	}
}
