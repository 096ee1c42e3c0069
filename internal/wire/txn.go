package wire

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Transaction is the program of an operation of kind [Txn]: etcd's transaction.
// If every compare holds, the Then operations run, else the Else ones, all
// at the operation's slot, atomically. A range read or delete, or a put, is
// a transaction of one operation and no compare.
//
// A transaction may touch any set of keys, which no witness or conflict
// check can see at a glance, so every protocol orders it through the log
// and answers it once applied: it never takes a fast path.
type Transaction struct {
	Compares []Compare
	Then     []TxnOp
	Else     []TxnOp
}

// CompareTarget is what a compare looks at in a key's latest version.
type CompareTarget uint8

const (
	CompareValue CompareTarget = iota
	// CompareVersion: writes since the key was created (0: absent).
	CompareVersion
	// CompareCreate: the slot that created the key (0: absent).
	CompareCreate
	// CompareMod: the slot of the key's last write (0: absent).
	CompareMod

	maxCompareTarget = CompareMod
)

// CompareResult is how a compare's operands must relate.
type CompareResult uint8

const (
	Equal CompareResult = iota
	NotEqual
	Less
	Greater

	maxCompareResult = Greater
)

// Compare tests one key's latest version, as etcd's compares do: an
// absent key's numbers are 0, and a value compare on an absent key fails
// whatever its result and operand.
type Compare struct {
	Key    string
	Target CompareTarget
	Result CompareResult
	// Value is the operand of a CompareValue; Number of the others.
	Value  []byte
	Number uint64
}

// TxnOp is one operation of a transaction.
type TxnOp struct {
	// Kind is Get for a range read, Put, or Delete for a range delete.
	Kind OpKind
	// Key and End are etcd's range: End empty names Key alone, End "\x00"
	// every key from Key on, anything else the keys in [Key, End). A put
	// has no End.
	Key, End string
	// Value is what a Put writes.
	Value []byte
	// Limit bounds a range read's keys; 0 is none.
	Limit uint64
	// KeysOnly and CountOnly trim a range read's answer.
	KeysOnly, CountOnly bool
	// PrevKV asks a Put or a Delete for what it overwrote or removed.
	PrevKV bool
}

// NoEnd as a range's End asks for every key from its Key on, as etcd's
// range_end "\x00" does (it costs the key "\x00" as an exclusive end,
// which would only leave out the empty key).
const NoEnd = "\x00"

// Covers reports whether key lies in o's range.
func (o *TxnOp) Covers(key string) bool {
	switch o.End {
	case "":
		return key == o.Key
	case NoEnd:
		return key >= o.Key
	}
	return key >= o.Key && key < o.End
}

// KeyValue is one key's version in a transaction's answer.
type KeyValue struct {
	Key   string
	Value []byte
	// Create and Mod are the slots of the key's creation and last write;
	// Version counts its writes since it was created.
	Create, Mod, Version uint64
}

// TxnOpResult answers one TxnOp.
type TxnOpResult struct {
	// KVs are a range read's keys, a Put's previous version (PrevKV, if
	// the key existed) or the keys a Delete removed (PrevKV).
	KVs []KeyValue
	// Count is how many keys a range read matched, beyond its Limit too;
	// More says it matched more than it returned.
	Count uint64
	More  bool
	// Deleted is how many keys a Delete removed.
	Deleted uint64
}

// TxnResult is an applied transaction's answer.
type TxnResult struct {
	Succeeded bool
	Results   []TxnOpResult
}

// Validate reports what makes t a program no replica should be asked to
// run; replicas run a valid one identically.
//
// As etcd's, a branch may write a key once: two puts of one key, or a put
// of a key that a delete of the same branch removes, in either order, are
// refused. A key a transaction writes then has one version per slot, as
// it would have in etcd, where a transaction is one revision.
func (t *Transaction) Validate() error {
	for _, c := range t.Compares {
		if c.Target > maxCompareTarget || c.Result > maxCompareResult {
			return fmt.Errorf("wire: bad compare target %d or result %d", c.Target, c.Result)
		}
	}
	for _, ops := range [][]TxnOp{t.Then, t.Else} {
		for _, o := range ops {
			if !o.Kind.Valid() || o.Kind == Txn {
				return fmt.Errorf("wire: bad transaction operation kind %d", o.Kind)
			}
			if o.Kind == Put && o.End != "" {
				return fmt.Errorf("wire: a put has no range end")
			}
		}
		if err := checkWrites(ops); err != nil {
			return err
		}
	}
	return nil
}

// checkWrites refuses a branch that writes a key twice (see Validate), in
// O(n log n) for n operations: the puts' keys sorted, each delete finds
// the first at or after its start.
func checkWrites(ops []TxnOp) error {
	var puts []string
	deletes := false
	for i := range ops {
		switch ops[i].Kind {
		case Put:
			puts = append(puts, ops[i].Key)
		case Delete:
			deletes = true
		}
	}
	if len(puts) == 0 || len(puts) == 1 && !deletes {
		return nil
	}
	slices.Sort(puts)
	for i := 1; i < len(puts); i++ {
		if puts[i] == puts[i-1] {
			return fmt.Errorf("wire: a transaction puts key %q twice", puts[i])
		}
	}
	for i := range ops {
		o := &ops[i]
		if o.Kind != Delete {
			continue
		}
		j, _ := slices.BinarySearch(puts, o.Key)
		if j == len(puts) {
			continue
		}
		if k := puts[j]; o.Covers(k) {
			return fmt.Errorf("wire: a transaction puts key %q and deletes it", k)
		}
	}
	return nil
}

// AppendTxn appends t's encoding, the Value of its operation.
func AppendTxn(b []byte, t *Transaction) []byte {
	b = binary.AppendUvarint(b, uint64(len(t.Compares)))
	for i := range t.Compares {
		c := &t.Compares[i]
		b = appendString(b, c.Key)
		b = append(b, byte(c.Target), byte(c.Result))
		b = appendBytes(b, c.Value)
		b = binary.AppendUvarint(b, c.Number)
	}
	b = appendTxnOps(b, t.Then)
	return appendTxnOps(b, t.Else)
}

func appendTxnOps(b []byte, ops []TxnOp) []byte {
	b = binary.AppendUvarint(b, uint64(len(ops)))
	for i := range ops {
		o := &ops[i]
		var flags byte
		for bit, set := range []bool{o.KeysOnly, o.CountOnly, o.PrevKV} {
			if set {
				flags |= 1 << bit
			}
		}
		b = append(b, byte(o.Kind), flags)
		b = appendString(b, o.Key)
		b = appendString(b, o.End)
		b = appendBytes(b, o.Value)
		b = binary.AppendUvarint(b, o.Limit)
	}
	return b
}

// DecodeTxn decodes and validates a program encoded by AppendTxn.
func DecodeTxn(b []byte) (*Transaction, error) {
	d := decoder{buf: b}
	t := new(Transaction)
	if n := d.count(5); n > 0 {
		t.Compares = make([]Compare, n)
		for i := range t.Compares {
			c := &t.Compares[i]
			c.Key = d.string()
			c.Target = CompareTarget(d.byte())
			c.Result = CompareResult(d.byte())
			c.Value = d.bytes()
			c.Number = d.uvarint()
		}
	}
	t.Then = d.txnOps()
	t.Else = d.txnOps()
	if err := d.finish("transaction"); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

const txnOpFlags = 1<<3 - 1

func (d *decoder) txnOps() []TxnOp {
	n := d.count(6)
	if n == 0 {
		return nil
	}
	ops := make([]TxnOp, n)
	for i := range ops {
		o := &ops[i]
		o.Kind = OpKind(d.byte())
		flags := d.byte()
		if d.err == nil && flags&^txnOpFlags != 0 {
			d.fail(fmt.Errorf("wire: bad transaction operation flags %#x", flags))
		}
		o.KeysOnly, o.CountOnly, o.PrevKV = flags&1 != 0, flags&2 != 0, flags&4 != 0
		o.Key = d.string()
		o.End = d.string()
		o.Value = d.bytes()
		o.Limit = d.uvarint()
	}
	return ops
}

// AppendTxnResult appends r's encoding, the Value of the operation's reply.
func AppendTxnResult(b []byte, r *TxnResult) []byte {
	b = appendBool(b, r.Succeeded)
	b = binary.AppendUvarint(b, uint64(len(r.Results)))
	for i := range r.Results {
		o := &r.Results[i]
		b = binary.AppendUvarint(b, uint64(len(o.KVs)))
		for j := range o.KVs {
			kv := &o.KVs[j]
			b = appendString(b, kv.Key)
			b = appendBytes(b, kv.Value)
			b = binary.AppendUvarint(b, kv.Create)
			b = binary.AppendUvarint(b, kv.Mod)
			b = binary.AppendUvarint(b, kv.Version)
		}
		b = binary.AppendUvarint(b, o.Count)
		b = appendBool(b, o.More)
		b = binary.AppendUvarint(b, o.Deleted)
	}
	return b
}

// DecodeTxnResult decodes an answer encoded by AppendTxnResult.
func DecodeTxnResult(b []byte) (*TxnResult, error) {
	d := decoder{buf: b}
	r := &TxnResult{Succeeded: d.bool()}
	if n := d.count(4); n > 0 {
		r.Results = make([]TxnOpResult, n)
		for i := range r.Results {
			o := &r.Results[i]
			if m := d.count(5); m > 0 {
				o.KVs = make([]KeyValue, m)
				for j := range o.KVs {
					kv := &o.KVs[j]
					kv.Key = d.string()
					kv.Value = d.bytes()
					kv.Create, kv.Mod, kv.Version = d.uvarint(), d.uvarint(), d.uvarint()
				}
			}
			o.Count = d.uvarint()
			o.More = d.bool()
			o.Deleted = d.uvarint()
		}
	}
	if err := d.finish("transaction result"); err != nil {
		return nil, err
	}
	return r, nil
}

func (d *decoder) finish(what string) error {
	if d.err == nil && len(d.buf) != 0 {
		d.err = fmt.Errorf("wire: %d trailing bytes after %s", len(d.buf), what)
	}
	return d.err
}
