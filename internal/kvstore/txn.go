package kvstore

import (
	"bytes"
	"cmp"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// executeTxn runs the transaction whose program is encoded in program (see
// wire.Transaction), at slot, as etcd runs its Txn: if every compare holds
// against the keys' current versions, the Then operations run, else the
// Else ones, in order, each seeing what the earlier ones wrote. Every
// write is at slot, so each key the transaction writes has slot for the
// slot of its last write, and each it creates for its creation slot.
//
// The result's Found says which branch ran (Then: true) and its Value is
// the encoded wire.TxnResult, which holds copies of the keys and values
// it reports: the session table keeps it, and it is sent later.
//
// A program that does not decode, which no client sends (clients validate
// theirs) but a replica cannot refuse (its log holds it), changes nothing
// and has a result of its own: not Found, no Value. Every replica decodes
// it alike, so every replica answers it alike.
func (s *Store) executeTxn(slot uint64, program []byte) Result {
	t, err := wire.DecodeTxn(program)
	if err != nil {
		return Result{Slot: slot}
	}
	succeeded := true
	for i := range t.Compares {
		if !s.holds(&t.Compares[i]) {
			succeeded = false
			break
		}
	}
	ops := t.Else
	if succeeded {
		ops = t.Then
	}
	res := wire.TxnResult{Succeeded: succeeded}
	if len(ops) > 0 {
		res.Results = make([]wire.TxnOpResult, len(ops))
	}
	for i := range ops {
		o := &ops[i]
		switch o.Kind {
		case wire.Get:
			res.Results[i] = s.txnRange(o)
		case wire.Put:
			res.Results[i] = s.txnPut(slot, o)
		case wire.Delete:
			res.Results[i] = s.txnDelete(o)
		}
	}
	return Result{Found: succeeded, Value: wire.AppendTxnResult(nil, &res), Slot: slot}
}

// holds reports whether the key's current version passes the compare, as
// etcd's Txn has it: an absent key's version, create and mod slots are 0,
// and a value compare on an absent key fails whatever its result and
// operand (etcd's gRPC cannot tell an absent value from an empty one). The
// operand is on the right: Less holds when the key's value or number is
// below it. Values compare bytewise.
func (s *Store) holds(c *wire.Compare) bool {
	e, ok := s.lookup(c.Key)
	if !ok {
		if c.Target == wire.CompareValue {
			return false
		}
		e = entry{}
	}
	var order int
	switch c.Target {
	case wire.CompareValue:
		order = bytes.Compare(s.vals.get(e.ref), c.Value)
	case wire.CompareVersion:
		order = cmp.Compare(uint64(e.version), c.Number)
	case wire.CompareCreate:
		order = cmp.Compare(e.create, c.Number)
	case wire.CompareMod:
		order = cmp.Compare(e.slot, c.Number)
	}
	switch c.Result {
	case wire.Equal:
		return order == 0
	case wire.NotEqual:
		return order != 0
	case wire.Less:
		return order < 0
	case wire.Greater:
		return order > 0
	}
	return false // not reached: the program was validated
}

// keyValue is a key's version as a transaction reports it. Its value
// aliases the store's chunks, whose bytes never change; the result's
// encoding copies it.
func (s *Store) keyValue(key string, e *entry) wire.KeyValue {
	return wire.KeyValue{Key: key, Value: s.vals.get(e.ref), Create: e.create, Mod: e.slot, Version: uint64(e.version)}
}

// txnRange runs a range read as etcd's Range: Count is every key in the
// range, those past the Limit too; More says there were keys past it. A
// CountOnly read returns no keys and, as etcd's, no More.
func (s *Store) txnRange(o *wire.TxnOp) wire.TxnOpResult {
	var r wire.TxnOpResult
	s.walk(o.Key, o.End, func(key []byte, e *entry) bool {
		r.Count++
		if o.CountOnly || o.Limit > 0 && uint64(len(r.KVs)) >= o.Limit {
			return true // counted alone
		}
		kv := s.keyValue(string(key), e)
		if o.KeysOnly {
			kv.Value = nil
		}
		r.KVs = append(r.KVs, kv)
		return true
	})
	r.More = !o.CountOnly && r.Count > uint64(len(r.KVs))
	return r
}

// executeScan runs a scan at slot. One whose program is not a scan's
// changes nothing, as nothing a scan runs does, and is answered alike
// everywhere: not Found, no Value.
func (s *Store) executeScan(slot uint64, op *wire.Op) Result {
	read, ok := wire.ScanRead(op)
	if !ok {
		return Result{Slot: slot}
	}
	r := s.txnRange(&read)
	return Result{Found: true, Value: wire.AppendScanResult(nil, &r), Slot: slot}
}

// Scan answers the range read of a scan from the applied state. Its keys'
// values alias the store's chunks, whose bytes never change; encoding it
// copies them.
func (s *Store) Scan(read *wire.TxnOp) wire.TxnOpResult {
	r := s.txnRange(read)
	if broken.scanSkipsKey && len(r.KVs) >= 2 {
		r.KVs = r.KVs[1:]
	}
	return r
}

// txnPut writes one key at slot; with PrevKV, its result holds the key's
// version before, if it was there.
func (s *Store) txnPut(slot uint64, o *wire.TxnOp) wire.TxnOpResult {
	var r wire.TxnOpResult
	if o.PrevKV {
		if e, ok := s.lookup(o.Key); ok {
			r.KVs = []wire.KeyValue{s.keyValue(o.Key, &e)}
		}
	}
	s.put(slot, o.Key, o.Value)
	return r
}

// txnDelete removes the keys in the range; with PrevKV, its result holds
// their versions before, in key order.
func (s *Store) txnDelete(o *wire.TxnOp) wire.TxnOpResult {
	var r wire.TxnOpResult
	var keys []string
	s.walk(o.Key, o.End, func(key []byte, e *entry) bool {
		k := string(key)
		keys = append(keys, k)
		if o.PrevKV {
			r.KVs = append(r.KVs, s.keyValue(k, e))
		}
		return true
	})
	// The walk is over before the first key goes: a deletion changes the
	// index it walks.
	for _, k := range keys {
		s.delete(k)
	}
	r.Deleted = uint64(len(keys))
	return r
}
