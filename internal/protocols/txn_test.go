package protocols_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/hybridkv/hybridkv/internal/checker"
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// txnNewLeaderScenario runs TestNewLeaderWaitsForLoggedTransactions's
// schedule on protocol name (of the CURP family, N = 5) and returns the
// history's check and the final read's completion.
//
// Followers C and D are cut off from the leader L and from A and B, so
// that they fall behind. A transaction T puts key k; once A and B hold it
// in their logs, L's messages to them, and theirs to each other, are
// blocked, so that they never learn it committed (followers also learn
// commits from each other's acknowledgements), while their
// acknowledgements still reach L, which commits T, applies it and answers
// it. Then L is cut off from every replica and C and D rejoin A and B.
// One of A and B, X, is elected, with T in its log, not known committed.
// X's raft appends to C and D are lost until the read below has its
// speculative answer, so that its log commits nothing (it needs C's or
// D's acknowledgement), while its heartbeats and CURP's messages go
// through: its recovery ends, and C and D learn that it leads and sync
// their witness runs with it. A strong read of k, invoked after T
// completed, is then submitted from X's site. X must see T pending,
// though it did not log it itself, and refuse the fast path (a new leader
// pools its log's unapplied entries); answered from X's applied state, the
// read would miss T's write, which completed before it was invoked (S1).
func txnNewLeaderScenario(t *testing.T, name string) (checker.Result, clientcore.Completion) {
	t.Helper()
	p, err := protocols.Lookup(name)
	require.NoError(t, err)
	// hold, while set, loses the raft appends a replica sends to the
	// replicas it names.
	var hold func(from, to wire.NodeID) bool
	c := newClusterTuned(t, name, 5, 1, sim.Network{}, func(cfg *sim.Config) {
		cfg.NewReplica = func(rc coreconfig.Config) (protocol.Replica, error) {
			r, err := p.NewReplica(rc, protocols.ReplicaOptions{})
			return &appendFilter{Replica: r, id: rc.ID, hold: &hold}, err
		}
	})
	rec := newRecorder(c)
	pos := func(id wire.NodeID) logPositions { return c.Replica(id).(*appendFilter).Replica.(logPositions) }
	l := c.Leader()
	others := c.except(l)
	ab, cd := others[:2], others[2:]
	writer := c.AddClient(siteOf(l))
	w := rec.submit(writer, 1, wire.Op{Kind: wire.Put, Key: key, Value: []byte("old")})
	require.True(t, c.runUntilDone([]wire.OpID{w}, 5*time.Second), "the first write did not complete")
	// Applied everywhere, so that no witness keeps a record of it.
	require.True(t, c.RunUntil(func() bool {
		for _, r := range c.Replicas() {
			if pos(r).AppliedIndex() < pos(l).AppliedIndex() {
				return false
			}
		}
		return true
	}, 5*time.Second), "the first write was not applied everywhere")
	c.Partition(cd, append([]wire.NodeID{l}, ab...))

	program := &wire.Transaction{Then: []wire.TxnOp{{Kind: wire.Put, Key: key, Value: []byte("txn")}}}
	last := pos(l).LastIndex()
	txn := rec.submit(writer, 1, wire.Op{Kind: wire.Txn, Value: wire.AppendTxn(nil, program)})
	require.True(t, c.RunUntil(func() bool {
		return pos(ab[0]).LastIndex() > last && pos(ab[1]).LastIndex() > last
	}, 5*time.Second), "A and B did not log the transaction")
	c.Block([]wire.NodeID{l}, ab)
	c.Partition(ab[:1], ab[1:]) // nor from each other's acknowledgements
	require.True(t, c.runUntilDone([]wire.OpID{txn}, 5*time.Second), "the transaction did not complete")
	slot := c.done[txn].Slot
	for _, r := range ab {
		require.Less(t, pos(r).Committed(), slot, "replica %d learned the transaction committed", r)
	}

	c.Heal()
	c.Partition([]wire.NodeID{l}, others)
	// A witness counts towards a fast path once the leader has its run,
	// which the leader's answer to its sync says.
	known := map[[2]wire.NodeID]bool{}
	c.OnDeliver = func(from, to wire.NodeID, m wire.Message) {
		if _, ok := m.(*wire.WitnessSyncReply); ok {
			known[[2]wire.NodeID{to, from}] = true
		}
	}
	var x wire.NodeID
	hold = func(from, to wire.NodeID) bool { return from == x && slices.Contains(cd, to) }
	require.True(t, c.RunUntil(func() bool {
		for _, r := range ab {
			if st := c.Status(r); st.Leader == r {
				x = r
				for _, o := range others {
					if o != r && (c.Status(o).Leader != r || !known[[2]wire.NodeID{o, r}]) {
						return false
					}
				}
				return true
			}
		}
		return false
	}, 10*time.Second), "neither A nor B was elected")
	c.OnDeliver = nil
	require.Less(t, pos(x).AppliedIndex(), slot, "the new leader applied the transaction before the read")
	reader := c.AddClient(siteOf(x))
	rd := rec.submit(reader, 2, wire.Op{Kind: wire.Get, Key: key})
	c.OnDeliver = func(from, to wire.NodeID, m wire.Message) {
		if rep, ok := m.(*wire.Reply); ok && rep.ID == rd && rep.Kind == wire.ReplySpeculative {
			hold = nil // the read has its speculative answer: commit
		}
	}
	require.True(t, c.runUntilDone([]wire.OpID{rd}, 5*time.Second), "the read did not complete")

	c.Heal()
	_, sts := c.Converged(10 * time.Second)
	committed, err := c.CommittedLog()
	require.NoError(t, err)
	file := &history.File{Events: rec.history(), Log: committed}
	for _, st := range sts {
		file.Replicas = append(file.Replicas, history.ReplicaState{ID: uint64(st.ID), Applied: st.Applied, Digest: st.Digest})
	}
	return checker.Check(file, p.CheckOptions()), c.done[rd]
}

// TestNewLeaderWaitsForLoggedTransactions runs txnNewLeaderScenario on
// every protocol of the CURP family: the new leader finds the
// transaction, committed by its predecessor and answered but not yet
// applied here, pending in its pool, so the read of a key it wrote takes
// the slow path and returns its value.
func TestNewLeaderWaitsForLoggedTransactions(t *testing.T) {
	for _, name := range []string{"curp", "curp-ht", "curp-ho"} {
		t.Run(name, func(t *testing.T) {
			res, rd := txnNewLeaderScenario(t, name)
			require.NoError(t, res.Err)
			require.True(t, res.Clean(), "%v", res.Violations)
			require.Equal(t, "txn", string(rd.Value))
			require.Equal(t, clientcore.PathSlow, rd.Path)
			require.Equal(t, clientcore.ReasonConflict, rd.Reason)
		})
	}
}

// appendFilter loses the raft appends its replica sends while hold says
// so; its other messages (heartbeats, CURP's) go out.
type appendFilter struct {
	protocol.Replica
	id   wire.NodeID
	hold *func(from, to wire.NodeID) bool
}

func (a *appendFilter) Ready() protocol.Ready {
	rd := a.Replica.Ready()
	if *a.hold == nil {
		return rd
	}
	lost := func(env wire.Envelope) bool {
		m, ok := env.Msg.(*wire.Raft)
		return ok && m.M.GetType() == raftpb.MessageType_MsgApp && (*a.hold)(a.id, env.To)
	}
	rd.Messages = slices.DeleteFunc(rd.Messages, lost)
	rd.After = slices.DeleteFunc(rd.After, lost)
	return rd
}
