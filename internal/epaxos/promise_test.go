package epaxos

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// startOn builds replica 1 of three on disk.
func startOn(t *testing.T, disk *raftlog.MemDisk, bootstrap bool) *Replica {
	t.Helper()
	return startWith(t, disk, bootstrap, Options{})
}

// startWith builds replica 1 of three on disk with opts.
func startWith(t *testing.T, disk *raftlog.MemDisk, bootstrap bool, opts Options) *Replica {
	t.Helper()
	r, err := NewReplica(coreconfig.Config{ID: 1, Peers: []wire.NodeID{1, 2, 3}, ElectionTicks: 10,
		Rand: rand.New(rand.NewPCG(1, 2)), Disk: disk, Bootstrap: bootstrap}, opts)
	require.NoError(t, err)
	return r
}

// round hands the replica's output to a driver that writes at once and
// returns the messages, those that waited for the write included.
func round(t *testing.T, r *Replica) []wire.Envelope {
	t.Helper()
	rd := r.Ready()
	if rd.Write != nil {
		require.NoError(t, rd.Write.Do())
	}
	out := append(append([]wire.Envelope(nil), rd.Messages...), rd.After...)
	r.Advance()
	return out
}

// answerAfterRestart has replica 1 promise a recovery ballot for an
// instance it pre-accepted, restart from its disk, and then receive the
// command leader's accept at ballot 0: the answer it sends.
func answerAfterRestart(t *testing.T) *wire.EPaxos {
	disk := raftlog.NewMemDisk()
	r := startOn(t, disk, true)
	round(t, r)
	id := wire.Instance{Replica: 3, Num: 1}
	cmd := put(9, 1, "k")
	r.Step(3, &wire.EPaxos{Kind: wire.EPreAccept, Instance: id, Command: cmd})
	round(t, r)
	r.Step(2, &wire.EPaxos{Kind: wire.EPrepare, Instance: id, Ballot: ballot(1, 2)})
	round(t, r)

	r = startOn(t, disk, false)
	round(t, r)
	r.Step(3, &wire.EPaxos{Kind: wire.EAccept, Instance: id, Command: cmd})
	for _, e := range round(t, r) {
		if m, ok := e.Msg.(*wire.EPaxos); ok && e.To == 3 && m.Kind == wire.EAcceptReply {
			return m
		}
	}
	t.Fatal("no answer to the accept")
	return nil
}

// TestPromiseSurvivesRestart: a replica that promised a higher ballot
// refuses the lower one after a restart, with that ballot named; the
// records keep the promised ballot beside the accepted one.
func TestPromiseSurvivesRestart(t *testing.T) {
	m := answerAfterRestart(t)
	require.False(t, m.Ok, "a restarted replica accepted below the ballot it had promised")
	require.Equal(t, ballot(1, 2), m.Promised)
}
