package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// staleHistory writes a history whose one fault is a stale read that only
// causal visibility (W5) explains: session 3 saw y=b, written by a session
// after it read x=a, and then finds nothing on x.
func staleHistory(t *testing.T) string {
	ev := func(sess, seq uint64, kind wire.OpKind, key, value string, inv, ret int64) history.Event {
		e := history.Event{Session: sess, Seq: seq, Level: wire.Weak, Kind: kind, Key: key,
			Invoke: inv, Return: ret, Outcome: history.OK}
		if value != "" {
			e.Value, e.Found = []byte(value), kind == wire.Get
		}
		return e
	}
	path := filepath.Join(t.TempDir(), "run.history")
	require.NoError(t, history.WriteFile(path, &history.File{Events: []history.Event{
		ev(1, 1, wire.Put, "x", "a", 0, 5), ev(2, 1, wire.Get, "x", "a", 10, 15), ev(2, 2, wire.Put, "y", "b", 20, 25),
		ev(3, 1, wire.Get, "y", "b", 30, 35), ev(3, 2, wire.Get, "x", "", 40, 45),
	}}))
	return path
}

func runCheck(t *testing.T, args ...string) (string, error) {
	cmd := newCheckCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestCheckTakesTheClaims(t *testing.T) {
	path := staleHistory(t)

	out, err := runCheck(t, path)
	require.Error(t, err, "every guarantee checked by default")
	assert.Contains(t, out, "W5 causal visibility")
	assert.Contains(t, out, "checked S1,W1,W2,W3,W4,W5,W6,C1,C2,C3,E1,X1; not claimed: none")

	out, err = runCheck(t, "--protocol", "curp-ho", path)
	require.Error(t, err, "curp-ho claims W5")
	assert.Contains(t, out, "not claimed: none; claimed, not checked: D1")

	out, err = runCheck(t, "--claims", "S1,W1,W2,W6,C1,C3,E1,X1", path)
	require.NoError(t, err, out)
	assert.Contains(t, out, "checked S1,W1,W2,W6,C1,C3,E1,X1; not claimed: W3,W4,W5,C2,D1")
	assert.Contains(t, out, "clean")

	_, err = runCheck(t, "--protocol", "raft", "--claims", "w1,w2", path)
	require.NoError(t, err, "--claims replaces the protocol's set")
}

func TestCheckFlags(t *testing.T) {
	for _, tc := range []struct {
		protocol, claims string
		ho               bool
		want             guarantees.Claims
		err              string
	}{
		{want: guarantees.Claims{}},
		{protocol: "curp-ho", want: guarantees.Claims{Set: guarantees.All, EarlyStrongVisibility: true}},
		{ho: true, want: guarantees.Claims{Set: guarantees.All, EarlyStrongVisibility: true}},
		{ho: true, protocol: "curp-ho", want: guarantees.Claims{Set: guarantees.All, EarlyStrongVisibility: true}},
		{protocol: "curp-ho", claims: "S1", want: guarantees.Claims{Set: guarantees.S1, EarlyStrongVisibility: true}},
		{claims: "W1,W2", want: guarantees.Claims{Set: guarantees.W1 | guarantees.W2}},
		{ho: true, protocol: "raft", err: "contradicts"},
		{protocol: "paxos", err: "unknown protocol"},
		{claims: "W9", err: "unknown guarantee"},
		{claims: " ", err: "no guarantee"},
	} {
		o, err := checkOptions(tc.protocol, tc.claims, tc.ho)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%+v", tc)
			continue
		}
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, tc.want.Set, o.Claims.Set, "%+v", tc)
		assert.Equal(t, tc.want.EarlyStrongVisibility, o.Claims.EarlyStrongVisibility, "%+v", tc)
	}
}
