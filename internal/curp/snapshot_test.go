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

// TestLaggingReplicaCatchesUpFromSnapshot compacts the log every few
// entries while a follower is down, so when it returns the leader no longer
// has the entries it missed and must send a snapshot of the store (and its
// session table) instead.
func TestLaggingReplicaCatchesUpFromSnapshot(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		s, err := sim.New(sim.Config{
			Seed: seed, Replicas: 3, Network: sim.Network{OneWay: sim.UniformWAN(3, 5*time.Millisecond)},
			BatchDelay: 200 * time.Microsecond,
			NewReplica: func(cfg protocol.ReplicaConfig) (protocol.Replica, error) {
				return curp.NewReplica(cfg, curp.Options{CompactEvery: 40, CompactKeep: 5})
			},
			NewClient: func(id wire.NodeID, replicas []wire.NodeID, _ uint32) protocol.Client {
				return curp.NewClient(curp.ClientConfig{ID: id, Replicas: replicas, RetryTicks: 20})
			},
		})
		require.NoError(t, err)
		require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 5*time.Second))
		var down wire.NodeID
		for _, r := range s.Replicas() {
			if r != s.Leader() {
				down = r
			}
		}
		s.Crash(down)
		_, err = s.RunWorkload(sim.Workload{ClientSites: []uint32{0, 1, 2}, Sessions: 2, Ops: 100, Pipeline: 2,
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
