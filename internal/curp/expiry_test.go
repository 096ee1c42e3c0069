package curp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/curpclient"
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
	const expiry = 2 * time.Second
	s, err := sim.New(sim.Config{
		Seed: 1, Replicas: 3, Network: sim.Network{OneWay: sim.UniformWAN(3, 5*time.Millisecond)},
		BatchDelay: 200 * time.Microsecond, SessionExpiry: expiry,
		NewReplica: func(cfg coreconfig.Config) (protocol.Replica, error) {
			return curp.NewReplica(cfg, curp.Options{CompactEvery: 16, CompactKeep: 4, MemoryKeep: 8})
		},
		NewClient: func(id wire.NodeID, replicas []wire.NodeID, _ uint32) clientcore.Core {
			return curpclient.New(curpclient.Config{ID: id, Replicas: replicas, RetryTicks: 20})
		},
	})
	require.NoError(t, err)
	require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 5*time.Second))
	leader := s.Leader()
	var follower wire.NodeID
	for _, r := range s.Replicas() {
		if r != leader {
			follower = r
		}
	}
	// Distinct keys: every write completes on the fast path, so every
	// witness records it.
	_, err = s.RunWorkload(sim.Workload{ClientSites: []uint32{0, 1, 2}, Sessions: 2, Ops: 10, Pipeline: 1,
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
