package node_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/node"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/round"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/transport"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// TestNodeAndSimulatorRoundsAgree runs a seeded simulation, records what
// one replica's loop was handed (messages as they arrived, rounds and
// what woke them, its disk's takes and writes), hands the same to a
// node's loop around a second core built like the first, and requires
// both cores to have been stepped with the same messages and to have
// produced the same output, round by round: the runtime's round code and
// the simulator's are one.
func TestNodeAndSimulatorRoundsAgree(t *testing.T) {
	for _, name := range protocols.TestNames() {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				sent, replayed := conformanceRun(t, name, seed)
				require.Greater(t, len(sent.log), 1000, "the scenario exercised the loop")
				for i := range min(len(sent.log), len(replayed.log)) {
					require.Equal(t, sent.log[i], replayed.log[i], "seed %d: first difference at record %d of the core's calls", seed, i)
				}
				require.Len(t, replayed.log, len(sent.log), "seed %d", seed)
			})
		}
	}
}

const traced = wire.NodeID(1)

// handed is one thing the traced replica's loop was handed.
type handed struct {
	step    sim.LoopStep
	from    wire.NodeID
	payload []byte // a message that arrived, when step.Kind is 0
}

func conformanceRun(t *testing.T, name string, seed uint64) (simulated, replayed *recorder) {
	p, err := protocols.Lookup(name)
	require.NoError(t, err)
	const batchDelay = 200 * time.Microsecond
	simulated = &recorder{}
	var (
		trace   []handed
		coreCfg coreconfig.Config
		started bool
	)
	cfg := sim.Config{
		Seed: seed, Replicas: 3, BatchDelay: batchDelay,
		Network: sim.Network{OneWay: sim.UniformWAN(3, 25*time.Millisecond), Jitter: 10 * time.Millisecond, Drop: 0.01, Duplicate: 0.01},
		Rounds:  sim.Rounds{Window: 2 * time.Millisecond, Limits: round.Deployed},
		NewReplica: func(c coreconfig.Config) (protocol.Replica, error) {
			if c.ID != traced {
				return p.NewReplica(c, protocols.ReplicaOptions{})
			}
			require.False(t, started, "the traced replica restarted")
			started = true
			// Both cores draw from generators seeded alike, and start
			// from blank disks alike.
			rs := c.Rand.Uint64()
			c.Rand = rand.New(rand.NewPCG(rs, 1))
			coreCfg = c
			coreCfg.Rand = rand.New(rand.NewPCG(rs, 1))
			coreCfg.Disk = raftlog.NewMemDisk()
			if c.Records != nil {
				coreCfg.Records = new(witness.MemLog)
			}
			r, err := p.NewReplica(c, protocols.ReplicaOptions{})
			return simulated.wrap(r), err
		},
		NewClient: func(id wire.NodeID, replicas []wire.NodeID, site uint32) clientcore.Core {
			return p.NewClient(protocols.ClientOptions{ID: id, Replicas: replicas, Closest: wire.NodeID(site + 1), RetryTicks: 20})
		},
	}
	s, err := sim.New(cfg)
	require.NoError(t, err)
	s.OnDeliver = func(from, to wire.NodeID, m wire.Message) {
		if to == traced {
			trace = append(trace, handed{from: from, payload: wire.Append(nil, m)})
		}
	}
	s.OnLoop = func(id wire.NodeID, step sim.LoopStep) {
		if id == traced {
			trace = append(trace, handed{step: step})
		}
	}
	_, err = s.RunWorkload(sim.Workload{ClientSites: sim.Sites(3), Sessions: 4, Ops: 40, Pipeline: 4,
		Keys: 6, WriteRatio: 0.5, WeakRatio: 0.5}, 60*time.Second)
	require.NoError(t, err)

	replayed = &recorder{}
	core, err := p.NewReplica(coreCfg, protocols.ReplicaOptions{})
	require.NoError(t, err)
	n := node.NewDetached(node.Config{Core: replayed.wrap(core), Transport: transport.Config{Self: traced}, BatchDelay: batchDelay},
		func([]wire.Envelope) {})
	var writing protocol.Batch
	for _, h := range trace {
		switch h.step.Kind {
		case 0:
			m, err := wire.Decode(h.payload)
			require.NoError(t, err)
			n.Put(h.from, m)
		case sim.Round:
			n.RunRound(h.step.Event)
		case sim.WriteTaken:
			b, ok := n.TakeWrite()
			require.True(t, ok, "the node's writer finds the rounds the simulated disk took")
			writing = b
		case sim.WriteDone:
			n.Write(writing)
		}
	}
	return simulated, replayed
}

// recorder logs a core's calls: each message stepped, each tick and
// flush, and each round's output with the core's status after it.
type recorder struct {
	log []string
}

func (r *recorder) wrap(c protocol.Replica) protocol.Replica { return &recorded{Replica: c, r: r} }

type recorded struct {
	protocol.Replica
	r *recorder
}

func (c *recorded) add(format string, args ...any) {
	c.r.log = append(c.r.log, fmt.Sprintf(format, args...))
}

func (c *recorded) Step(from wire.NodeID, m wire.Message) {
	c.add("step from %d: %x", from, wire.Append(nil, m))
	c.Replica.Step(from, m)
}

func (c *recorded) Tick() {
	c.add("tick")
	c.Replica.Tick()
}

func (c *recorded) Flush() {
	c.add("flush")
	c.Replica.Flush()
}

func (c *recorded) Ready() protocol.Ready {
	rd := c.Replica.Ready()
	c.add("ready: write %t", rd.Write != nil)
	for _, e := range rd.Messages {
		c.add("  send to %d: %x", e.To, wire.Append(nil, e.Msg))
	}
	for _, e := range rd.After {
		c.add("  after the write, to %d: %x", e.To, wire.Append(nil, e.Msg))
	}
	return rd
}

func (c *recorded) Advance() {
	c.Replica.Advance()
	c.add("status %+v", c.Replica.Status())
}
