package protocols_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/checker"
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// logPositions is what the scenario reads of a replica's raft log.
type logPositions interface {
	FirstIndex() uint64
	LastIndex() uint64
	Committed() uint64
	AppliedIndex() uint64
}

// recorder keeps the history of the operations a test submits, on the
// virtual clock, for the checker.
type recorder struct {
	c      *cluster
	open   map[wire.OpID]history.Event
	events []history.Event
}

func newRecorder(c *cluster) *recorder {
	r := &recorder{c: c, open: map[wire.OpID]history.Event{}}
	prev := c.OnComplete
	c.OnComplete = func(client wire.NodeID, d clientcore.Completion) {
		prev(client, d)
		e, ok := r.open[d.ID]
		if !ok {
			return
		}
		delete(r.open, d.ID)
		e.Return, e.Outcome, e.Slot = int64(c.Now()), history.OK, d.FinalSlot()
		switch {
		case e.Kind == wire.Txn:
			e.Result = d.Value
		case !e.Kind.IsWrite():
			e.Found, e.Value = d.Found, d.Value
		}
		r.events = append(r.events, e)
	}
	return r
}

func (r *recorder) submit(client wire.NodeID, session uint64, op wire.Op) wire.OpID {
	id := r.c.Submit(client, session, op)
	r.open[id] = history.Event{Session: id.Session, Seq: id.Seq, Level: op.Level, Kind: op.Kind,
		Key: op.Key, Value: op.Value, Invoke: int64(r.c.Now())}
	return id
}

// history returns the events, those still open with an unknown outcome.
func (r *recorder) history() []history.Event {
	events := append([]history.Event(nil), r.events...)
	for _, e := range r.open {
		events = append(events, e)
	}
	return events
}

// snapshotClockExpiry is the session expiry of the snapshot clock
// scenario; snapshotClockCut is how long the follower is cut off with its
// clock at snapshotClockDrift times the rate: its ticks run ahead of the
// log's clock by (drift − 1) × cut, more than the expiry.
const (
	snapshotClockExpiry = 8 * time.Second
	snapshotClockDrift  = 2.5
	snapshotClockCut    = 7 * time.Second
)

// snapshotClockScenario runs TestSnapshotClockKeepsRetriesExactlyOnce's
// schedule on protocol name and returns the history's check.
//
// A follower F is cut off for 7 s with its clock at 2.5 times the rate, so
// its ticks run 10.5 s ahead of the log's clock, past the 8 s expiry (a
// cut of expiry/(drift − 1), 5.3 s, would do), while the leader L trims
// the log it holds in memory (MemoryKeep 16), so F must catch up from a
// snapshot. Two seconds before the cut ends, session A writes key k; its
// client hears no reply and goes on retrying the write with the same
// identity. Then session B writes k. At the end of the cut, once L and the
// third replica R hold the same log, all of it applied, R is cut off from
// both and its clock slowed, and F rejoins L, which snapshots for it. Just
// after F installed the snapshot L crashes, before F hears of any later
// entry; F, whose log is then R's, is elected (its clock, still fast,
// times out first) before it applied a clock entry. Its first clock entry,
// at its ticks, must not forget session A, whose retry, two seconds old,
// reaches F after B's write: applied again, it would overwrite B's value,
// and the replicas' state would not be the log's with each operation
// taking effect once (X1).
func snapshotClockScenario(t *testing.T, name string) checker.Result {
	t.Helper()
	p, err := protocols.Lookup(name)
	require.NoError(t, err)
	c := newClusterTuned(t, name, 3, 1, sim.Network{}, func(cfg *sim.Config) {
		cfg.SessionExpiry = snapshotClockExpiry
		cfg.NewReplica = func(rc coreconfig.Config) (protocol.Replica, error) {
			return p.NewReplica(rc, protocols.ReplicaOptions{CompactKeep: 4, MemoryKeep: 16})
		}
	})
	rec := newRecorder(c)
	pos := func(id wire.NodeID) logPositions { return c.Replica(id).(logPositions) }
	leader, f := c.Leader(), c.follower()
	var r wire.NodeID
	for _, x := range c.except(leader) {
		if x != f {
			r = x
		}
	}
	const k = key
	a, b := c.AddClient(siteOf(leader)), c.AddClient(siteOf(leader))
	start := c.Now()
	c.Partition([]wire.NodeID{f}, []wire.NodeID{leader, r})
	c.SetTickRate(f, snapshotClockDrift)
	fApplied := pos(f).AppliedIndex()

	c.RunFor(snapshotClockCut - 2*time.Second)
	// A's replies are lost: its client retries until it hears back.
	c.Block(c.Replicas(), []wire.NodeID{a})
	wa := rec.submit(a, 1, wire.Op{Kind: wire.Put, Key: k, Value: []byte("a")})
	require.True(t, c.RunUntil(func() bool {
		v, ok := c.Replica(leader).(interface{ Read(string) ([]byte, bool) }).Read(k)
		return ok && string(v) == "a"
	}, 2*time.Second), "A's write was not applied")
	c.RunFor(500 * time.Millisecond)
	wb := rec.submit(b, 2, wire.Op{Kind: wire.Put, Key: k, Value: []byte("b")})
	require.True(t, c.runUntilDone([]wire.OpID{wb}, 2*time.Second), "B's write did not complete")
	c.RunFor(start + snapshotClockCut - c.Now())

	// The end of the cut, at a moment L and R hold the same log, all of it
	// applied: what L snapshots for F is then all R holds.
	require.True(t, c.RunUntil(func() bool {
		l, rr := pos(leader), pos(r)
		return l.Committed() == l.LastIndex() && l.AppliedIndex() == l.LastIndex() && rr.LastIndex() == l.LastIndex()
	}, 2*time.Second), "the log never settled")
	require.Greater(t, pos(leader).FirstIndex(), fApplied+1, "the leader's log was not trimmed past the follower")
	c.Heal()
	c.Partition([]wire.NodeID{r}, []wire.NodeID{leader, f})
	c.Block(c.Replicas(), []wire.NodeID{a})
	c.SetTickRate(r, 0.2)
	settled := pos(r).LastIndex()
	require.True(t, c.RunUntil(func() bool { return pos(f).AppliedIndex() >= settled }, 2*time.Second),
		"the follower did not catch up")
	require.Greater(t, pos(f).FirstIndex(), fApplied+1, "the follower caught up from entries, not a snapshot")
	c.RunFor(5 * time.Millisecond) // F's disk holds the snapshot; L's answer is 25 ms away
	c.Crash(leader)
	c.Heal()
	c.Block(c.Replicas(), []wire.NodeID{a})
	require.True(t, c.RunUntil(func() bool { return c.Leader() != 0 }, 5*time.Second), "no new leader")
	require.Equal(t, f, c.Leader(), "the replica that caught up from the snapshot was not elected")
	// Its first clock entry is logged. Both clocks go back to the rate: at
	// 2.5 times it, F's election timeout (40 ms) is shorter than the round
	// trip to R (50 ms), and as leader it would keep failing raft's quorum
	// check.
	c.SetTickRate(r, 1)
	c.SetTickRate(f, 1)
	c.RunFor(2 * time.Second) // A's retries reach F
	c.Heal()
	require.True(t, c.runUntilDone([]wire.OpID{wa}, 5*time.Second), "A's write never completed")
	rd := rec.submit(b, 2, wire.Op{Kind: wire.Get, Key: k})
	require.True(t, c.runUntilDone([]wire.OpID{rd}, 5*time.Second), "the final read did not complete")

	_, sts := c.Converged(10 * time.Second)
	committed, err := c.CommittedLog()
	require.NoError(t, err)
	file := &history.File{Events: rec.history(), Log: committed}
	for _, st := range sts {
		file.Replicas = append(file.Replicas, history.ReplicaState{ID: uint64(st.ID), Applied: st.Applied, Digest: st.Digest})
	}
	return checker.Check(file, p.CheckOptions())
}

// TestSnapshotClockKeepsRetriesExactlyOnce runs snapshotClockScenario on
// every protocol: a follower caught up from a snapshot and elected counts
// its ticks from the snapshot's clock, so a retry a few seconds old, well
// within the expiry, still finds its session and is not applied twice.
// Before the snapshot set the ticks, the new leader's first clock entry
// forgot every session and the retry overwrote B's write (X1).
func TestSnapshotClockKeepsRetriesExactlyOnce(t *testing.T) {
	for _, name := range protocols.TestNames() {
		t.Run(name, func(t *testing.T) {
			skipWithoutSessionExpiry(t, name)
			res := snapshotClockScenario(t, name)
			require.NoError(t, res.Err)
			require.True(t, res.Clean(), "%v", res.Violations)
			require.Positive(t, res.Checked["X1"], "X1 was not checked")
		})
	}
}
