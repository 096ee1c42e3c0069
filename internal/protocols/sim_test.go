package protocols_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// cluster is a simulated cluster of one protocol with helpers to run single
// operations to completion.
type cluster struct {
	t    *testing.T
	seed uint64
	*sim.Sim
	done map[wire.OpID]clientcore.Completion
}

func newCluster(t *testing.T, name string, n int, seed uint64, net sim.Network) *cluster {
	t.Helper()
	return newClusterWith(t, name, n, seed, net, false)
}

// newClusterWith is newCluster, with CURP witness records kept in memory
// only when volatile is set.
func newClusterWith(t *testing.T, name string, n int, seed uint64, net sim.Network, volatile bool) *cluster {
	t.Helper()
	return newClusterTuned(t, name, n, seed, net, func(cfg *sim.Config) { cfg.VolatileWitnesses = volatile })
}

// newClusterTuned is newCluster with tune applied to the simulator's
// configuration.
func newClusterTuned(t *testing.T, name string, n int, seed uint64, net sim.Network, tune func(*sim.Config)) *cluster {
	t.Helper()
	p, err := protocols.Lookup(name)
	require.NoError(t, err)
	if net.OneWay == nil {
		net.OneWay = sim.UniformWAN(n, 25*time.Millisecond)
	}
	cfg := sim.Config{
		Seed: seed, Replicas: n, Network: net, BatchDelay: 200 * time.Microsecond,
		NewReplica: func(cfg coreconfig.Config) (protocol.Replica, error) {
			return p.NewReplica(cfg, protocols.ReplicaOptions{})
		},
		NewClient: func(id wire.NodeID, replicas []wire.NodeID, site uint32) clientcore.Core {
			return p.NewClient(protocols.ClientOptions{ID: id, Replicas: replicas,
				Closest: wire.NodeID(site + 1), RetryTicks: 20})
		},
	}
	tune(&cfg)
	s, err := sim.New(cfg)
	require.NoError(t, err)
	c := &cluster{t: t, seed: seed, Sim: s, done: map[wire.OpID]clientcore.Completion{}}
	s.OnComplete = func(_ wire.NodeID, d clientcore.Completion) { c.done[d.ID] = d }
	require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 5*time.Second), "seed %d: no leader", seed)
	// One strong write so the leader has finished its recovery.
	warm := s.AddClient(0)
	c.do(warm, 1<<40, wire.Op{Kind: wire.Put, Key: "\x00warm"})
	return c
}

// runUntilDone runs the simulation until every operation in ids completed,
// for at most d, and reports whether they did.
func (c *cluster) runUntilDone(ids []wire.OpID, d time.Duration) bool {
	return c.RunUntil(func() bool {
		for _, id := range ids {
			if _, ok := c.done[id]; !ok {
				return false
			}
		}
		return true
	}, d)
}

// do runs one operation to completion.
func (c *cluster) do(client wire.NodeID, session uint64, op wire.Op) clientcore.Completion {
	c.t.Helper()
	id := c.Submit(client, session, op)
	ok := c.RunUntil(func() bool { _, ok := c.done[id]; return ok }, 10*time.Second)
	require.True(c.t, ok, "seed %d: %v %v did not complete", c.seed, op.Kind, op.Level)
	return c.done[id]
}

func (c *cluster) put(client wire.NodeID, session uint64, key, value string, level wire.Level) clientcore.Completion {
	return c.do(client, session, wire.Op{Kind: wire.Put, Key: key, Value: []byte(value), Level: level})
}

func (c *cluster) get(client wire.NodeID, session uint64, key string, level wire.Level) clientcore.Completion {
	return c.do(client, session, wire.Op{Kind: wire.Get, Key: key, Level: level})
}

// follower returns a replica that does not lead.
func (c *cluster) follower() wire.NodeID {
	for _, r := range c.Replicas() {
		if r != c.Leader() {
			return r
		}
	}
	return 0
}

// except lists the replicas other than r.
func (c *cluster) except(r wire.NodeID) []wire.NodeID {
	var others []wire.NodeID
	for _, x := range c.Replicas() {
		if x != r {
			others = append(others, x)
		}
	}
	return others
}

func siteOf(r wire.NodeID) uint32 { return uint32(r - 1) }

func forSizes(t *testing.T, protos []string, f func(t *testing.T, name string, n int)) {
	for _, name := range protos {
		for _, n := range []int{3, 5} {
			t.Run(fmt.Sprintf("%s/n=%d", name, n), func(t *testing.T) { f(t, name, n) })
		}
	}
}

// TestRandomizedRuns mixes strong and weak operations on few keys under
// jitter, reordering, duplication and loss: every operation is answered
// exactly once and all replicas end in the same state.
func TestRandomizedRuns(t *testing.T) {
	seeds := uint64(3)
	if raceDetector {
		seeds = 1
	}
	forSizes(t, protocols.TestNames(), func(t *testing.T, name string, n int) {
		for seed := uint64(1); seed <= seeds; seed++ {
			c := newCluster(t, name, n, seed, sim.Network{
				OneWay: sim.UniformWAN(n, 25*time.Millisecond), Jitter: 10 * time.Millisecond,
				Drop: 0.01, Duplicate: 0.01,
			})
			sites := sim.Sites(n)
			res, err := c.RunWorkload(sim.Workload{ClientSites: sites, Sessions: 3, Ops: 2000 / (3 * n), Pipeline: 3,
				Keys: 50, WriteRatio: 0.3, WeakRatio: 0.5}, 10*time.Minute)
			require.NoError(t, err, "seed %d", seed)
			ok, sts := c.Converged(30 * time.Second)
			require.True(t, ok, "seed %d: replicas diverged: %+v", seed, sts)
			t.Logf("seed %d: %d ops, paths %v", seed, res.Completed, res.Paths)
		}
	})
}
