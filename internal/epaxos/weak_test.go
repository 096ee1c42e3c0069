package epaxos

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// weakReadsAnswered counts the weak reads answered in out, those of
// session apart.
func weakReadsAnswered(out []wire.Envelope, session uint64) (ofSession, others int) {
	for _, e := range out {
		if rep, ok := e.Msg.(*wire.Reply); ok && rep.Kind == wire.ReplyWeak && rep.Ok {
			if rep.ID.Session == session {
				ofSession++
			} else {
				others++
			}
		}
	}
	return ofSession, others
}

// TestParkedReadsCostNothingWhileTheyWait: weak reads waiting for an
// instance to execute here are looked at again when it executes, not
// after every message. They used to be looked at after every message
// the replica stepped, so its work per message grew with the reads
// outstanding: at 99 % weak, 3 x 32 sessions with 15 in flight, EPaxos-HO
// spent 70 % of its CPU there and its strong p50 rose from 159 to 426 ms.
func TestParkedReadsCostNothingWhileTheyWait(t *testing.T) {
	r := startWith(t, raftlog.NewMemDisk(), true, Options{WeakPath: true})
	round(t, r)
	client := wire.FirstClientID + 1
	const session, parked, others = 7, 500, 2000
	// The session saw instance 2.1 elsewhere; this replica has not heard
	// of it.
	missing := wire.Instance{Replica: 2, Num: 1}
	for i := range parked {
		r.Step(client, &wire.Request{Op: wire.Op{ID: wire.OpID{Session: session, Seq: uint64(i + 2)},
			Level: wire.Weak, Kind: wire.Get, Key: "k"}, After: []wire.Instance{missing}})
	}
	for i := range others {
		r.Step(client, &wire.Request{Op: wire.Op{ID: wire.OpID{Session: uint64(100 + i), Seq: 1},
			Level: wire.Weak, Kind: wire.Get, Key: "j"}})
	}
	ofSession, answered := weakReadsAnswered(round(t, r), session)
	require.Zero(t, ofSession, "a read was answered before what its session saw executed here")
	require.Equal(t, others, answered)
	require.Equal(t, parked, r.parkedReads())
	require.LessOrEqual(t, r.stats.readChecks, uint64(parked+others),
		"%d reads parked while %d others were answered: %d looks", parked, others, r.stats.readChecks)

	r.Step(2, &wire.EPaxos{Kind: wire.ECommit, Instance: missing, Command: put(9, 1, "k")})
	ofSession, _ = weakReadsAnswered(round(t, r), session)
	require.Equal(t, parked, ofSession, "reads answered once 2.1 executed")
	require.Zero(t, r.parkedReads())
	require.Empty(t, r.parked)
	require.LessOrEqual(t, r.stats.readChecks, uint64(2*parked+others))
}
