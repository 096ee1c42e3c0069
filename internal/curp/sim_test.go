package curp_test

import (
	"fmt"
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

func newSim(t *testing.T, seed uint64, n int, net sim.Network) *sim.Sim {
	t.Helper()
	s, err := sim.New(sim.Config{
		Seed:          seed,
		Replicas:      n,
		Network:       net,
		BatchDelay:    200 * time.Microsecond,
		ElectionTicks: 10,
		NewReplica: func(cfg coreconfig.Config) (protocol.Replica, error) {
			return curp.NewReplica(cfg, curp.Options{})
		},
		NewClient: func(id wire.NodeID, replicas []wire.NodeID, _ uint32) clientcore.Core {
			return curpclient.New(curpclient.Config{ID: id, Replicas: replicas, RetryTicks: 20})
		},
	})
	require.NoError(t, err)
	return s
}

// TestSimFaultyNetwork is the foundation's acceptance run: 10,000 operations
// under jitter, cross-connection reordering, duplication and 1% loss, every
// operation answered exactly once, all replicas converged.
func TestSimFaultyNetwork(t *testing.T) {
	seeds := uint64(2)
	if curp.RaceDetector {
		seeds = 1
	}
	for _, n := range []int{3, 5} {
		for seed := uint64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("n=%d/seed=%d", n, seed), func(t *testing.T) {
				s := newSim(t, seed, n, sim.Network{
					OneWay:    sim.UniformWAN(n, 25*time.Millisecond),
					Jitter:    10 * time.Millisecond,
					Drop:      0.01,
					Duplicate: 0.01,
				})
				require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 5*time.Second),
					"seed %d: no leader", seed)
				const sessions = 4
				res, err := s.RunWorkload(sim.Workload{
					ClientSites: sim.Sites(n), Sessions: sessions, Pipeline: 4,
					Ops:  (10000 + sessions*n - 1) / (sessions * n),
					Keys: 200, WriteRatio: 0.3,
				}, 10*time.Minute)
				require.NoError(t, err, "seed %d", seed)
				ok, sts := s.Converged(30 * time.Second)
				require.True(t, ok, "seed %d: replicas diverged: %+v", seed, sts)
				t.Logf("seed %d: %d ops, paths %v, net %+v, virtual %v", seed, res.Completed, res.Paths, s.Stats, s.Now())
			})
		}
	}
}
