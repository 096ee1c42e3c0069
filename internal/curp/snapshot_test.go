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

// TestLaggingReplicaCatchesUpFromSnapshot compacts the log every few
// entries while a follower is down, so when it returns the leader no longer
// has the entries it missed and must send a snapshot of the store (and its
// session table) instead.
func TestLaggingReplicaCatchesUpFromSnapshot(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		s := compactingSim(t, seed, 40)
		var down wire.NodeID
		for _, r := range s.Replicas() {
			if r != s.Leader() {
				down = r
			}
		}
		s.Crash(down)
		_, err := s.RunWorkload(sim.Workload{ClientSites: []uint32{0, 1, 2}, Sessions: 2, Ops: 100, Pipeline: 2,
			Keys: 30, WriteRatio: 0.5}, 5*time.Minute)
		require.NoError(t, err, "seed %d", seed)
		before := s.Status(down).Applied
		first := s.Replica(s.Leader()).(*curp.Replica).FirstIndex()
		require.Greater(t, first, before+1, "seed %d: the log was not compacted past the missing entries", seed)
		require.NoError(t, s.Restart(down))
		ok, sts := s.Converged(30 * time.Second)
		require.True(t, ok, "seed %d: the restarted replica did not catch up: %+v", seed, sts)
		require.Greater(t, s.Status(down).Applied, before+40, "seed %d", seed)
		// The session table came with the snapshot: a retry of an old
		// write is still recognised everywhere.
		for _, r := range s.Replicas() {
			_, outcome := s.Replica(r).(*curp.Replica).Store().Lookup(wire.OpID{Session: 1<<16 | 1, Seq: 100})
			require.NotZero(t, outcome, "seed %d: replica %d lost the session table", seed, r)
		}
	}
}

// TestCompactionScalesWithTheState: a snapshot costs time in proportion to
// the state, so the log is compacted after as many entries as the state
// holds keys when that is more than CompactEvery; a large store is then not
// snapshotted every few entries.
func TestCompactionScalesWithTheState(t *testing.T) {
	s := compactingSim(t, 1, 20)
	_, err := s.RunWorkload(sim.Workload{ClientSites: []uint32{0, 1, 2}, Sessions: 2, Ops: 100, Pipeline: 2,
		Keys: 1 << 20, WriteRatio: 1}, 5*time.Minute)
	require.NoError(t, err)
	leader := s.Leader()
	keys := s.Replica(leader).(*curp.Replica).Store().Len()
	require.Greater(t, keys, 500, "the workload should write mostly distinct keys")
	// 600 writes: every 20 entries would be about 30 snapshots; after as
	// many entries as keys, a handful.
	snaps := s.Disk(leader).Stats().Snapshots
	require.LessOrEqual(t, snaps, uint64(6), "%d snapshots of a %d-key store in 600 writes", snaps, keys)
	require.Positive(t, snaps, "the log was never compacted")
}

// compactingSim starts three CURP replicas that compact their logs after
// every entries applied (at least), and waits for a leader.
func compactingSim(t *testing.T, seed, every uint64) *sim.Sim {
	t.Helper()
	return simWith(t, seed, curp.Options{CompactEvery: every, CompactKeep: 5})
}

// simWith starts three CURP replicas built with opts and waits for a
// leader.
func simWith(t *testing.T, seed uint64, opts curp.Options) *sim.Sim {
	return startSim(t, simConfig(seed, opts))
}

// simConfig is three CURP replicas built with opts, 5 ms apart one way.
func simConfig(seed uint64, opts curp.Options) sim.Config {
	return sim.Config{
		Seed: seed, Replicas: 3, Network: sim.Network{OneWay: sim.UniformWAN(3, 5*time.Millisecond)},
		BatchDelay: 200 * time.Microsecond,
		NewReplica: func(cfg coreconfig.Config) (protocol.Replica, error) {
			return curp.NewReplica(cfg, opts)
		},
		NewClient: func(id wire.NodeID, replicas []wire.NodeID, _ uint32) clientcore.Core {
			return curpclient.New(curpclient.Config{ID: id, Replicas: replicas, RetryTicks: 20})
		},
	}
}

// startSim starts the simulation cfg describes and runs it until a
// replica leads.
func startSim(t *testing.T, cfg sim.Config) *sim.Sim {
	t.Helper()
	s, err := sim.New(cfg)
	require.NoError(t, err)
	require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 5*time.Second))
	return s
}

// TestTrimmedLogCatchesFollowersUpFromFreshSnapshots: the log held in
// memory is trimmed to a few applied entries while the state is too large
// to snapshot yet, so memory stays bounded between snapshots; a follower
// that was down gets a snapshot the leader takes for it.
func TestTrimmedLogCatchesFollowersUpFromFreshSnapshots(t *testing.T) {
	const keep = 20
	s := simWith(t, 1, curp.Options{CompactEvery: 1 << 20, CompactKeep: 5, MemoryKeep: keep})
	leader := s.Leader()
	var down wire.NodeID
	for _, r := range s.Replicas() {
		if r != leader {
			down = r
		}
	}
	s.Crash(down)
	_, err := s.RunWorkload(sim.Workload{ClientSites: []uint32{0, 1, 2}, Sessions: 2, Ops: 100, Pipeline: 2,
		Keys: 1 << 20, WriteRatio: 1}, 5*time.Minute)
	require.NoError(t, err)
	lead := s.Replica(leader).(*curp.Replica)
	held := lead.LastIndex() - lead.FirstIndex() + 1
	require.LessOrEqual(t, held, uint64(2*keep), "the leader holds %d entries in memory", held)
	require.Zero(t, s.Disk(leader).Stats().Snapshots-1, "only the bootstrap snapshot before the follower returns")
	before := s.Status(down).Applied
	require.NoError(t, s.Restart(down))
	ok, sts := s.Converged(30 * time.Second)
	require.True(t, ok, "the restarted replica did not catch up: %+v", sts)
	require.Greater(t, s.Status(down).Applied, before+500)
	require.Greater(t, s.Disk(leader).Stats().Snapshots, uint64(1), "the leader took no snapshot for the follower")
	_, outcome := s.Replica(down).(*curp.Replica).Store().Lookup(wire.OpID{Session: 1<<16 | 1, Seq: 100})
	require.NotZero(t, outcome, "the follower's session table did not come with the snapshot")
}
