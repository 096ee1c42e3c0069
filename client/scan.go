package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// ScanKind is the Kind of a scan, for Submit: its key is the scan's first
// key, its value EncodeScan's, and its Result's Value a TxnResult of one
// TxnOpResult (DecodeScanResult).
const ScanKind = wire.Scan

// ErrBadScan refuses a scan whose value is not EncodeScan's for its key.
var ErrBadScan = errors.New("client: a scan's value must be EncodeScan's, for the scan's first key")

// EncodeScan validates a range read (Kind Get; Key, End, Limit, KeysOnly
// and CountOnly as in a transaction) and encodes it as the value of a
// ScanKind operation whose key is read.Key.
func EncodeScan(read TxnOp) ([]byte, error) {
	read.Kind = Get
	if read.PrevKV {
		return nil, fmt.Errorf("client: a scan is a range read, which has no prev_kv")
	}
	op := wire.NewScan(Strong, read)
	if _, ok := wire.ScanRead(&op); !ok {
		return nil, fmt.Errorf("client: %q to %q is not a range a scan can read", read.Key, read.End)
	}
	return op.Value, nil
}

// DecodeScanResult decodes the Value of a scan's Result.
func DecodeScanResult(b []byte) (*TxnOpResult, error) {
	tr, err := wire.DecodeTxnResult(b)
	if err != nil {
		return nil, err
	}
	if len(tr.Results) != 1 {
		return nil, fmt.Errorf("client: a scan's answer holds %d results, not 1", len(tr.Results))
	}
	return &tr.Results[0], nil
}

// Scan reads the keys of read's range in key order: STRONG, ordered
// through the log like a transaction; WEAK, from the closest replica's
// state, which reflects the session's causal past (its own writes
// included), as a WEAK Get does.
func (s *Session) Scan(ctx context.Context, read TxnOp, level Level) (*TxnOpResult, Result, error) {
	b, err := EncodeScan(read)
	if err != nil {
		return nil, Result{}, err
	}
	r, err := s.Do(ctx, ScanKind, read.Key, b, level)
	if err != nil {
		return nil, r, err
	}
	if !r.Found {
		return nil, r, fmt.Errorf("client: the replicas refused the scan at slot %d as malformed", r.Slot)
	}
	sr, err := DecodeScanResult(r.Value)
	return sr, r, err
}
