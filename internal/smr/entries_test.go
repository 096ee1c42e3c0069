package smr

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestEachEntryIsDecodedOnce: a follower decodes each request it logs
// once, when appended; the leader decodes none of those it proposed.
func TestEachEntryIsDecodedOnce(t *testing.T) {
	s := compactingSim(t)
	leader := replica(s, s.Leader())
	const ops = 20
	for i := range uint64(ops) {
		leader.Propose(0, &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 1, Seq: i + 1}, Kind: wire.Put, Key: strconv.FormatUint(i, 10), Value: []byte("v")}})
	}
	leader.Flush()
	applied := func() bool {
		for _, id := range s.Replicas() {
			if replica(s, id).Store().Len() < ops {
				return false
			}
		}
		return true
	}
	require.True(t, s.RunUntil(applied, 5*time.Second), "not applied everywhere")
	for _, id := range s.Replicas() {
		want := uint64(ops)
		if id == leader.id {
			want = 0
		}
		require.Equal(t, want, replica(s, id).entries.decodedRequests, "replica %d", id)
	}
}

func TestEntriesForgetReplacedAndRestoredOnes(t *testing.T) {
	var e entries
	enc := func(seq uint64) []byte {
		return wire.Append(nil, &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 1, Seq: seq}, Kind: wire.Put}})
	}
	for i := uint64(1); i <= 5; i++ {
		e.append(1, i, enc(i))
	}
	e.append(1, 4, enc(40)) // replaces 4 and 5
	seq := func(m wire.Message) uint64 { return m.(*wire.Request).Op.ID.Seq }
	require.Equal(t, uint64(1), seq(e.apply(1, 1, enc(1))))
	e.restore(2)
	require.Equal(t, uint64(40), seq(e.apply(1, 4, enc(40))), "entry 3 went with the snapshot, 4 is the replacement")
	require.Empty(t, e.appended)
	require.Equal(t, uint64(6), e.decodedRequests)
	require.Equal(t, uint64(9), seq(e.apply(1, 9, enc(9))), "an entry not kept is decoded")
}
