package curpho

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestWeakScanShowsTheSessionsPooledWrites: a weak scan at a replica that
// applied none of its session's weak writes (no leader has logged them)
// answers with them, each key's latest by the session's order and only
// those issued before the scan, and names the latest as its dependency,
// so that its reply waits for the round's write.
func TestWeakScanShowsTheSessionsPooledWrites(t *testing.T) {
	r := newFollower(t)
	const session = uint64(wire.FirstClientID) + 5
	client := wire.FirstClientID + 1
	other := wire.FirstClientID + 2
	var prev uint64
	write := func(from wire.NodeID, sess, seq uint64, kind wire.OpKind, key, value string) {
		req := &wire.Request{Op: wire.Op{ID: wire.OpID{Session: sess, Seq: seq}, Level: wire.Weak,
			Kind: kind, Key: key, Value: []byte(value)}, Flags: wire.FlagReplyWanted}
		if sess == session {
			req.PrevWeak, prev = prev, seq
		}
		r.Step(from, req)
	}
	write(client, session, 1, wire.Put, "b", "b1")
	write(client, session, 2, wire.Put, "d", "d1")
	write(client, session, 3, wire.Put, "b", "b2")
	write(client, session, 4, wire.Delete, "d", "")
	write(client, session, 5, wire.Put, "x", "out of range")
	write(other, session+1, 1, wire.Put, "c", "another session's")
	scan := wire.NewScan(wire.Weak, wire.TxnOp{Key: "a", End: "m"})
	scan.ID = wire.OpID{Session: session, Seq: 6}
	r.Step(client, &wire.Request{Op: scan, PrevWeak: prev, Flags: wire.FlagReplyWanted})
	write(client, session, 7, wire.Put, "c", "after the scan")

	rd := r.Ready()
	var got *wire.Reply
	for _, env := range rd.After {
		if rep, ok := env.Msg.(*wire.Reply); ok && rep.ID == scan.ID {
			got = rep
		}
	}
	for _, env := range rd.Messages {
		if rep, ok := env.Msg.(*wire.Reply); ok {
			require.NotEqual(t, scan.ID, rep.ID, "a scan that shows pooled writes must wait for the round's write")
		}
	}
	r.Advance()
	require.NotNil(t, got, "the scan's reply")
	require.True(t, got.Found)
	require.Equal(t, wire.OpID{Session: session, Seq: 4}, got.ReadDep)
	res, err := wire.DecodeTxnResult(got.Value)
	require.NoError(t, err)
	require.Len(t, res.Results, 1)
	require.Equal(t, []wire.KeyValue{{Key: "b", Value: []byte("b2")}}, res.Results[0].KVs)
	require.Equal(t, uint64(1), res.Results[0].Count)
}
