package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Txn is etcd's transaction: if every compare holds, the Then operations
// run, else the Else ones, atomically at one log position. A range read
// or a range delete is a transaction of one operation. Transactions are
// always STRONG and take the ordered path: the leader answers once the
// transaction is committed and applied.
type Txn = wire.Transaction

// TxnOp is one operation of a transaction: Kind Get for a range read, Put,
// or Delete for a range delete.
type TxnOp = wire.TxnOp

// Compare tests a key's latest version in a transaction.
type Compare = wire.Compare

// CompareTarget is what a Compare looks at; CompareResult how it relates.
type (
	CompareTarget = wire.CompareTarget
	CompareResult = wire.CompareResult
)

// What a Compare looks at, and how its operands must relate.
const (
	CompareValue   = wire.CompareValue
	CompareVersion = wire.CompareVersion
	CompareCreate  = wire.CompareCreate
	CompareMod     = wire.CompareMod

	Equal    = wire.Equal
	NotEqual = wire.NotEqual
	Less     = wire.Less
	Greater  = wire.Greater
)

// TxnResult is a transaction's answer; TxnOpResult one operation's; KeyValue
// one key's version in it.
type (
	TxnResult   = wire.TxnResult
	TxnOpResult = wire.TxnOpResult
	KeyValue    = wire.KeyValue
)

// TxnKind is the Kind of a transaction's operation, for Submit: its value
// is the transaction's encoding (EncodeTxn).
const TxnKind = wire.Txn

// NoEnd as a range's End asks for every key from its Key on, as etcd's
// range_end "\x00" does.
const NoEnd = wire.NoEnd

// ErrWeakTxn refuses a WEAK transaction: a transaction touches keys no
// weak path can see at a glance, so it is always ordered.
var ErrWeakTxn = errors.New("client: a transaction is always STRONG")

// EncodeTxn validates t and encodes it as the value of a TxnKind operation.
func EncodeTxn(t *Txn) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return wire.AppendTxn(nil, t), nil
}

// DecodeTxnResult decodes the value of a transaction's Result.
func DecodeTxnResult(b []byte) (*TxnResult, error) { return wire.DecodeTxnResult(b) }

// Txn runs a transaction and waits for it; Result's Slot is the log
// position it took effect at, as for any operation.
func (s *Session) Txn(ctx context.Context, t *Txn) (*TxnResult, Result, error) {
	b, err := EncodeTxn(t)
	if err != nil {
		return nil, Result{}, err
	}
	r, err := s.Do(ctx, TxnKind, "", b, Strong)
	if err != nil {
		return nil, r, err
	}
	if !r.Found && r.Value == nil {
		return nil, r, fmt.Errorf("client: the replicas refused the transaction at slot %d as malformed", r.Slot)
	}
	tr, err := DecodeTxnResult(r.Value)
	return tr, r, err
}

// Range reads the keys in [key, end) (end empty: key alone; NoEnd: every
// key from key on), at most limit of them (0: no limit), in key order: a
// STRONG scan (see Scan).
func (s *Session) Range(ctx context.Context, key, end string, limit uint64) ([]KeyValue, error) {
	sr, _, err := s.Scan(ctx, TxnOp{Kind: Get, Key: key, End: end, Limit: limit}, Strong)
	if err != nil {
		return nil, err
	}
	return sr.KVs, nil
}

func checkOp(kind Kind, key string, value []byte, level Level) error {
	switch {
	case kind == wire.Txn && level == wire.Weak:
		return ErrWeakTxn
	case !kind.Valid():
		return fmt.Errorf("client: unknown operation kind %d", kind)
	case kind == wire.Scan:
		if _, ok := wire.ScanRead(&wire.Op{Kind: kind, Key: key, Value: value}); !ok {
			return ErrBadScan
		}
	}
	return nil
}
