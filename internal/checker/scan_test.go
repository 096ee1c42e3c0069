package checker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// scan builds a scan of read that completed with answer r.
func scan(l wire.Level, sess uint64, inv, ret int64, read wire.TxnOp, r wire.TxnOpResult) history.Event {
	op := wire.NewScan(l, read)
	return history.Event{Session: sess, Level: l, Kind: wire.Scan, Key: op.Key, Invoke: inv, Return: ret,
		Outcome: history.OK, Value: op.Value, Result: wire.AppendScanResult(nil, &r)}
}

// TestScans: a scan is checked as the reads of its range, at its level,
// like a transaction's range read: one that skips a key holding a value
// its reader must see is caught, weak or strong, and so is one that
// returns a value its reader knows overwritten; correct ones pass.
func TestScans(t *testing.T) {
	limited := trange(x, "\x00")
	limited.Limit = 1
	cut := found(x, "a")
	cut.Count, cut.More = 2, true
	tests := []historyCase{
		{name: "ok: a strong scan after two puts finds both",
			events: numbered(put(S, 1, x, "a", 0, 10), put(W, 1, y, "b", 20, 30),
				scan(S, 2, 40, 50, trange(x, z), found(x, "a", y, "b")))},
		{name: "ok: a weak scan of another session may miss a concurrent put",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, y, "b", 20, 100),
				scan(W, 2, 40, 50, trange(x, z), found(x, "a")))},
		{name: "ok: a scan cut by its limit says nothing of the keys past it",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, y, "b", 20, 30),
				scan(W, 1, 40, 50, limited, cut))},
		{name: "S1: a strong scan skips a key a completed put wrote",
			events: numbered(put(S, 1, x, "a", 0, 10), put(S, 1, y, "b", 20, 30), put(S, 1, z, "c", 20, 30),
				scan(S, 2, 40, 50, trange(x, "\x00"), found(x, "a", z, "c"))),
			want: []string{"S1", "W5"}, pattern: `scan 2.1 found nothing`},
		{name: "W1: a weak scan skips its session's own put",
			events: numbered(put(W, 1, x, "a", 0, 10), put(W, 1, y, "b", 20, 30),
				scan(W, 1, 40, 50, trange(x, z), found(x, "a"))),
			want: []string{"W1"}, pattern: `scan 1.3 found nothing on key "y" although put 1.2 is in its causal past`},
		{name: "W3: a weak scan returns a value its session read overwritten",
			events: numbered(put(W, 1, y, "a", 0, 10), put(W, 1, y, "b", 20, 30),
				get(W, 2, y, "b", 40, 50), scan(W, 2, 60, 70, trange(x, z), found(y, "a"))),
			want: []string{"W3"}, pattern: `scan 2.2 read 1.1's value on key "y" although put 1.2, newer`},
	}
	runHistoryCases(t, tests)
}

// TestScanIsOneRangeRead: a scan event whose program is anything but one
// range read of its key is refused as malformed.
func TestScanIsOneRangeRead(t *testing.T) {
	e := scan(W, 1, 0, 10, trange(x, z), found())
	e.Seq = 1
	e.Key = y
	r := Check(&history.File{Events: []history.Event{e}}, Options{})
	require.ErrorContains(t, r.Err, "not one range read of its key")
}
