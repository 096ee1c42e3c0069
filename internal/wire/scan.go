package wire

import (
	"slices"
	"strings"
)

// NewScan returns a Scan of read, a range read (Kind Get): its program is a
// transaction of that one operation, and its Key read's Key.
func NewScan(level Level, read TxnOp) Op {
	read.Kind = Get
	return Op{Level: level, Kind: Scan, Key: read.Key,
		Value: AppendTxn(nil, &Transaction{Then: []TxnOp{read}})}
}

// ScanRead returns the range read of a Scan: ok is false when op's program
// is not a transaction of exactly one range read of op's Key, which no
// client sends (clients build theirs with NewScan) and every replica then
// answers alike, with an empty result.
func ScanRead(op *Op) (read TxnOp, ok bool) {
	if op.Kind != Scan {
		return TxnOp{}, false
	}
	t, err := DecodeTxn(op.Value)
	if err != nil || len(t.Compares) > 0 || len(t.Else) > 0 || len(t.Then) != 1 {
		return TxnOp{}, false
	}
	read = t.Then[0]
	if read.Kind != Get || read.Key != op.Key || read.PrevKV || t.Validate() != nil {
		return TxnOp{}, false
	}
	return read, true
}

// AppendScanResult appends the answer of a Scan whose range read found r:
// the TxnResult of its one-operation program.
func AppendScanResult(b []byte, r *TxnOpResult) []byte {
	return AppendTxnResult(b, &TxnResult{Succeeded: true, Results: []TxnOpResult{*r}})
}

// KeyWrite is a write's effect on one key: the value a put left, or (Found
// false) the absence a delete left.
type KeyWrite struct {
	Key   string
	Found bool
	Value []byte
}

// Overlay returns the answer read would have had from the state r came
// from with writes, which hold at most one write per key, applied on top.
// A weak path uses it to show a session its own writes that the state it
// read does not hold yet.
//
// A key r returned was present; a key of read's range r did not return,
// up to its last returned key (every key, when r was not cut by read's
// Limit), was absent. Of a key past the cut, only wasPresent can tell; it
// is asked only for those, and only for a count's sake: such a write
// changes Count, never the keys returned, as keys past the cut that r did
// not fetch may lie before it. A CountOnly read asks wasPresent of every
// key written, unless r counted none. Overlaid keys carry no revision (0):
// they are not applied anywhere yet.
func Overlay(read *TxnOp, r TxnOpResult, writes []KeyWrite, wasPresent func(key string) bool) TxnOpResult {
	out := TxnOpResult{Count: r.Count, KVs: slices.Clone(r.KVs)}
	cut := r.More || r.Count > uint64(len(r.KVs))
	last := ""
	if n := len(r.KVs); n > 0 {
		last = r.KVs[n-1].Key
	}
	for _, w := range writes {
		if !read.Covers(w.Key) {
			continue
		}
		i, returned := slices.BinarySearchFunc(out.KVs, w.Key, func(kv KeyValue, k string) int { return strings.Compare(kv.Key, k) })
		past := cut && (len(r.KVs) == 0 || w.Key > last)
		var before bool
		switch {
		case read.CountOnly:
			before = r.Count > 0 && wasPresent(w.Key)
		case returned:
			before = true
		case past:
			before = wasPresent(w.Key)
		}
		switch {
		case w.Found && !before:
			out.Count++
		case !w.Found && before:
			out.Count--
		}
		if read.CountOnly || past {
			continue
		}
		switch {
		case !w.Found && returned:
			out.KVs = slices.Delete(out.KVs, i, i+1)
		case w.Found && returned:
			out.KVs[i] = overlaid(read, w)
		case w.Found:
			out.KVs = slices.Insert(out.KVs, i, overlaid(read, w))
		}
	}
	if read.Limit > 0 && uint64(len(out.KVs)) > read.Limit {
		clear(out.KVs[read.Limit:])
		out.KVs = out.KVs[:read.Limit]
	}
	out.More = !read.CountOnly && out.Count > uint64(len(out.KVs))
	return out
}

func overlaid(read *TxnOp, w KeyWrite) KeyValue {
	kv := KeyValue{Key: w.Key, Value: w.Value}
	if read.KeysOnly {
		kv.Value = nil
	}
	return kv
}
