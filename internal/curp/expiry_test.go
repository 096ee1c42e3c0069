package curp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestRestartDoesNotReviveRecordsOfExpiredSessions: a follower witnesses
// writes, applies them and drops their records from its pool, but its
// witness log keeps them (removals are not logged). The sessions then idle
// past the expiry, so the session table forgets them, and the log is
// compacted past the writes. Restarted from that snapshot, the follower
// cannot tell the applied writes from unapplied ones by the session table
// any more; had it pooled them again, it would have handed them to the
// leader as stale records 3 s later, and the leader would have applied
// each a second time.
func TestRestartDoesNotReviveRecordsOfExpiredSessions(t *testing.T) {
	s := expirySim(t, compacting)
	leader := s.Leader()
	var follower wire.NodeID
	for _, r := range s.Replicas() {
		if r != leader {
			follower = r
		}
	}
	// Distinct keys: every write completes on the fast path, so every
	// witness records it.
	_, err := s.RunWorkload(sim.Workload{ClientSites: []uint32{0, 1, 2}, Sessions: 2, Ops: 10, Pipeline: 1,
		Keys: 1 << 20, WriteRatio: 1}, time.Minute)
	require.NoError(t, err)
	ok, _ := s.Converged(10 * time.Second)
	require.True(t, ok)
	rep := func(id wire.NodeID) *curp.Replica { return s.Replica(id).(*curp.Replica) }
	require.NotZero(t, s.Records(follower).Bytes(), "the follower's witness log holds the writes' records")
	require.Zero(t, rep(follower).Pool().Len(), "applied writes left the pool")

	// Idle past the expiry: clock entries forget the sessions and, every
	// 16 entries, compact the log.
	s.RunFor(3 * expiry)
	require.Zero(t, rep(follower).Store().Sessions(), "the sessions expired")
	snapshots := s.Disk(follower).Stats().Snapshots
	require.Greater(t, snapshots, uint64(1), "the follower compacted its log")
	digest := s.Status(leader).Digest

	s.Crash(follower)
	require.NoError(t, s.Restart(follower))
	require.Zero(t, rep(follower).Pool().Len(), "the restarted follower pooled records of writes it had applied")
	// Long enough for any record to go stale and reach the leader.
	s.RunFor(8 * time.Second)
	for _, r := range s.Replicas() {
		require.Zero(t, measure(rep(r), curp.MetricStaleLogged), "replica %d logged stale records", r)
		require.Zero(t, rep(r).Store().Sessions(), "replica %d: an expired session applied a write again", r)
		require.Equal(t, digest, s.Status(r).Digest, "replica %d: a write applied again", r)
	}
}

// measure reads one of a replica's own metrics; a replica without it
// fails the test.
func measure(r protocol.Replica, name string) int {
	m := r.Metrics()
	v, ok := m.Measure(name)
	if !ok {
		panic("no metric " + name)
	}
	return int(v)
}

// TestRecordsDownPastTheExpiryAreNotLoggedAgain: a follower crashes
// holding the witness record of a write the others then apply; a second
// write overwrites it, the sessions idle past the expiry and the log is
// compacted. Restarted, the follower pools the record again (its own state
// never applied the write) and catches up from a snapshot that has
// forgotten the session, so nothing tells the write was applied. It used
// to hand the record to the leader as stale 3 s later, and the leader
// applied the first write a second time, over the second (X1 in the
// checked simulation, seed 8273 of CURP-HO at N = 3).
func TestRecordsDownPastTheExpiryAreNotLoggedAgain(t *testing.T) {
	s := expirySim(t, compacting)
	leader := s.Leader()
	var follower wire.NodeID
	for _, r := range s.Replicas() {
		if r != leader {
			follower = r
		}
	}
	rep := func(id wire.NodeID) *curp.Replica { return s.Replica(id).(*curp.Replica) }
	applied := func(r wire.NodeID, id wire.OpID) bool { return rep(r).Applied(id) }
	client := s.AddClient(0)

	first := s.Submit(client, 1, wire.Op{Kind: wire.Put, Key: "k", Value: []byte("first")})
	require.True(t, s.RunUntil(func() bool { return s.Records(follower).Bytes() > 0 }, time.Second),
		"the follower's witness log holds the write's record")
	require.False(t, applied(follower, first), "the commit is a round trip away")
	s.Crash(follower)
	require.True(t, s.RunUntil(func() bool { return applied(leader, first) }, 5*time.Second))
	second := s.Submit(client, 2, wire.Op{Kind: wire.Put, Key: "k", Value: []byte("second")})
	require.True(t, s.RunUntil(func() bool { return applied(leader, second) }, 5*time.Second))

	// Idle past the expiry: clock entries forget the sessions and compact
	// the log, so the follower catches up from a snapshot.
	s.RunFor(3 * expiry)
	require.Zero(t, rep(leader).Store().Sessions(), "the sessions expired")
	require.NoError(t, s.Restart(follower))
	require.True(t, rep(follower).Pool().Has(first), "the restarted follower pools the write its state never applied")
	// Long enough for any record to go stale and reach the leader.
	s.RunFor(8 * time.Second)
	digest := s.Status(leader).Digest
	for _, r := range s.Replicas() {
		v, found := rep(r).Store().Read("k")
		require.True(t, found)
		require.Equal(t, "second", string(v.Value), "replica %d: the first write was applied again", r)
		require.Equal(t, digest, s.Status(r).Digest, "replica %d", r)
		require.Zero(t, measure(rep(r), curp.MetricStaleLogged), "replica %d logged stale records", r)
		require.Zero(t, rep(r).Pool().Len(), "replica %d still pools records", r)
	}
	require.Equal(t, 1, measure(rep(follower), curp.MetricStaleOutlived), "the follower gave the record up")
}

// TestRequestsHeldBehindAnExpiredSessionGoOn: a request naming its
// session's previous weak write is held until that write is logged. Were
// the write applied and its session forgotten since (a client cut off
// from the leader for longer than the expiry, which had not learned that
// its weak write committed), nothing would log it again and the session
// could never go on: its client retried the next operations for ever
// (seed 8273 of CURP-HO at N = 3, once its records stopped being logged a
// second time). The leader holds such a request for a whole expiry, then
// logs it.
func TestRequestsHeldBehindAnExpiredSessionGoOn(t *testing.T) {
	s := expirySim(t, curp.Options{})
	leader := s.Leader()
	rep := func(id wire.NodeID) *curp.Replica { return s.Replica(id).(*curp.Replica) }
	client := s.AddClient(0)
	id := wire.OpID{Session: 7, Seq: 9}
	s.Inject(client, leader, &wire.Request{Op: wire.Op{ID: id, Kind: wire.Put, Key: "k", Value: []byte("v")}, PrevWeak: 8})

	s.RunFor(expiry / 2)
	require.Equal(t, 1, measure(rep(leader), curp.MetricHeldRequests), "held behind the weak write it names")
	require.False(t, rep(leader).Applied(id))
	require.True(t, s.RunUntil(func() bool { return rep(leader).Applied(id) }, 2*expiry),
		"still held after a whole expiry")
	require.Zero(t, measure(rep(leader), curp.MetricHeldRequests))
	require.Equal(t, 1, measure(rep(leader), curp.MetricHeldOutlived))
}

// expiry is the session expiry of expirySim's clusters.
const expiry = 2 * time.Second

// compacting has a replica compact its log every 16 entries, so that a
// replica down or idle past the expiry catches up from a snapshot.
var compacting = curp.Options{CompactEvery: 16, CompactKeep: 4, MemoryKeep: 8}

// expirySim starts three CURP replicas, 5 ms apart one way, whose sessions
// expire after expiry, and runs it until one leads.
func expirySim(t *testing.T, opts curp.Options) *sim.Sim {
	cfg := simConfig(1, opts)
	cfg.SessionExpiry = expiry
	return startSim(t, cfg)
}
