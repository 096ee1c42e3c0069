package wire

import (
	"cmp"
	"fmt"
)

// NodeID names a process: replicas are 1..N (raft IDs), clients use IDs at or
// above [FirstClientID].
type NodeID uint64

// FirstClientID is the smallest node ID a client may use; everything below is
// reserved for replicas.
const FirstClientID NodeID = 1 << 32

// IsClient reports whether the ID belongs to a client process.
func (n NodeID) IsClient() bool { return n >= FirstClientID }

// OpID identifies an operation: its session and its sequence number within the
// session. Retries reuse the OpID; replicas apply an OpID at most once.
type OpID struct {
	Session uint64
	Seq     uint64
}

func (id OpID) String() string { return fmt.Sprintf("%x.%d", id.Session, id.Seq) }

// IsZero reports whether the ID is unset.
func (id OpID) IsZero() bool { return id == OpID{} }

// Level is the consistency an operation asks for.
type Level uint8

const (
	Strong Level = iota // linearizable
	Weak                // causal
)

func (l Level) String() string {
	switch l {
	case Strong:
		return "strong"
	case Weak:
		return "weak"
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// OpKind is what an operation does to the store.
type OpKind uint8

const (
	Get OpKind = iota
	Put
	// Delete removes the key. It is a write everywhere a write matters
	// (conflicts, witnesses, weak paths, the session table, the checker):
	// a put of "absent".
	Delete
	// Txn runs the Transaction encoded in its Value (AppendTxn) on any
	// keys: it conflicts with every operation, and its reply's Value is a
	// TxnResult (AppendTxnResult).
	Txn
	// Scan reads a range of keys: its Value is a Transaction of one range
	// read and nothing else (AppendScan), whose Key is the operation's,
	// and its reply's Value a TxnResult, as a transaction's. Unlike a
	// transaction it writes nothing, so it may be WEAK: a weak path
	// answers it from a replica's applied state, as a weak Get.
	Scan

	maxOpKind = Scan
)

func (k OpKind) String() string {
	switch k {
	case Get:
		return "get"
	case Put:
		return "put"
	case Delete:
		return "delete"
	case Txn:
		return "txn"
	case Scan:
		return "scan"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether the kind is one this version knows.
func (k OpKind) Valid() bool { return k <= maxOpKind }

// IsWrite reports whether the operation changes the store.
func (k OpKind) IsWrite() bool { return k == Put || k == Delete || k == Txn }

// HasProgram reports whether the operation's Value is a Transaction
// (AppendTxn) and its answer a TxnResult: a transaction, or a scan.
func (k OpKind) HasProgram() bool { return k == Txn || k == Scan }

// Op is one key-value operation as clients submit it and the log stores it.
type Op struct {
	ID    OpID
	Level Level
	Kind  OpKind
	// Key is any byte string, the empty one included; a string so that it
	// is immutable and a map key as it stands.
	Key   string
	Value []byte // the value written by a Put, a Txn's program; empty for a Get or a Delete
}

// Conflicts reports whether two operations must be ordered: same key, at least
// one a write; a transaction, with every operation; a scan, with every
// write (its range is in its program, which this does not decode).
func (o *Op) Conflicts(p *Op) bool {
	switch {
	case o.Kind == Txn || p.Kind == Txn:
		return true
	case o.Kind == Scan || p.Kind == Scan:
		return o.Kind.IsWrite() || p.Kind.IsWrite()
	}
	return o.Key == p.Key && (o.Kind.IsWrite() || p.Kind.IsWrite())
}

// Compare orders identities by session, then sequence number.
func (id OpID) Compare(o OpID) int {
	if c := cmp.Compare(id.Session, o.Session); c != 0 {
		return c
	}
	return cmp.Compare(id.Seq, o.Seq)
}
