package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestSharedFramesEncodeABroadcastOnce: a message in consecutive
// envelopes is encoded once, its frame the one each connection would
// have encoded; a batch without one allocates nothing.
func TestSharedFramesEncodeABroadcastOnce(t *testing.T) {
	req := &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 1, Seq: 2}, Kind: wire.Put, Key: "3", Value: []byte("v")}}
	other := &wire.Reply{Kind: wire.ReplyWeak, ID: wire.OpID{Session: 1, Seq: 1}}
	envs := []wire.Envelope{{To: 1, Msg: other}, {To: 1, Msg: req}, {To: 2, Msg: req}, {To: 3, Msg: req}}
	sh := sharedFrames(envs)
	defer sh.release()
	frames := sh.of()
	require.Nil(t, frames[0])
	want := wire.AppendFrame(nil, req)
	for _, f := range frames[1:] {
		require.Equal(t, want, f)
		require.Same(t, &frames[1][0], &f[0], "one encoding for all three")
	}
	require.Nil(t, sharedFrames(envs[:2]), "one message to one node")
	require.Nil(t, sharedFrames([]wire.Envelope{{To: 1, Msg: req}, {To: 1, Msg: req}}), "a message twice to one node")
	require.Zero(t, testing.AllocsPerRun(100, func() { sharedFrames(envs[:2]) }))
	if !raceDetector {
		require.Zero(t, testing.AllocsPerRun(100, func() { sharedFrames(envs).release() }), "pooled")
	}
}
