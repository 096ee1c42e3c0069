// Package protocols names every protocol hybridkv can run and builds its
// cores, so the server, the client library, the simulator and the benchmark
// agree on what "curp" means.
package protocols

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/curpho"
	"github.com/hybridkv/hybridkv/internal/curpht"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftkv"
	"github.com/hybridkv/hybridkv/internal/smr"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// ReplicaOptions are the tuning knobs shared by replica cores.
type ReplicaOptions struct {
	MaxBatch int
	// CompactEvery, CompactKeep and MemoryKeep tune log compaction (see
	// smr.Options); zero takes smr's defaults. Tests shrink them so that
	// a lagging follower catches up from a snapshot.
	CompactEvery, CompactKeep, MemoryKeep uint64
	Logger                                *slog.Logger
}

// smr returns the options of the replicated state machine.
func (o ReplicaOptions) smr() smr.Options {
	return smr.Options{MaxBatch: o.MaxBatch, Logger: o.Logger,
		CompactEvery: o.CompactEvery, CompactKeep: o.CompactKeep, MemoryKeep: o.MemoryKeep}
}

// ClientOptions configure a client core.
type ClientOptions struct {
	ID       wire.NodeID
	Replicas []wire.NodeID
	// Closest is the replica nearest to the client (weak reads go there).
	Closest    wire.NodeID
	RetryTicks int
}

// Protocol is one protocol's constructors and traits.
type Protocol struct {
	Name       string
	NewReplica func(protocol.ReplicaConfig, ReplicaOptions) (protocol.Replica, error)
	NewClient  func(ClientOptions) protocol.Client
	// WeakAsStrong is set for protocols with no weak path: they serve weak
	// operations as strong ones, and reports say so.
	WeakAsStrong bool
}

var all = []Protocol{
	curpFamily("curp", nil, nil),
	curpFamily("curp-ht",
		func() curp.Extension { return curpht.NewReplica() },
		func(closest wire.NodeID) curp.ClientExtension { return curpht.NewClient(closest) }),
	curpFamily("curp-ho",
		func() curp.Extension { return curpho.NewReplica() },
		func(closest wire.NodeID) curp.ClientExtension { return curpho.NewClient(closest) }),
	{
		Name: "raft",
		NewReplica: func(cfg protocol.ReplicaConfig, o ReplicaOptions) (protocol.Replica, error) {
			return raftkv.NewReplica(cfg, o.smr())
		},
		NewClient: func(o ClientOptions) protocol.Client {
			return raftkv.NewClient(o.Replicas, o.RetryTicks)
		},
		WeakAsStrong: true,
	},
}

// curpFamily builds CURP with a hybrid protocol's extensions plugged in;
// without them it is plain CURP, which serves weak operations as strong.
func curpFamily(name string, replica func() curp.Extension, client func(closest wire.NodeID) curp.ClientExtension) Protocol {
	return Protocol{
		Name: name,
		NewReplica: func(cfg protocol.ReplicaConfig, o ReplicaOptions) (protocol.Replica, error) {
			opts := curp.Options{MaxBatch: o.MaxBatch, Logger: o.Logger,
				CompactEvery: o.CompactEvery, CompactKeep: o.CompactKeep, MemoryKeep: o.MemoryKeep}
			if replica != nil {
				opts.Extension = replica()
			}
			return curp.NewReplica(cfg, opts)
		},
		NewClient: func(o ClientOptions) protocol.Client {
			cfg := curp.ClientConfig{ID: o.ID, Replicas: o.Replicas, RetryTicks: o.RetryTicks}
			if client != nil {
				cfg.Extension = client(o.closest())
			}
			return curp.NewClient(cfg)
		},
		WeakAsStrong: replica == nil,
	}
}

// closest falls back to the first replica when the client's site has none.
func (o ClientOptions) closest() wire.NodeID {
	if o.Closest != 0 || len(o.Replicas) == 0 {
		return o.Closest
	}
	return o.Replicas[0]
}

// Lookup returns the protocol called name.
func Lookup(name string) (Protocol, error) {
	i := slices.IndexFunc(all, func(p Protocol) bool { return p.Name == name })
	if i < 0 {
		return Protocol{}, fmt.Errorf("unknown protocol %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return all[i], nil
}

// Names lists the protocols in the order benchmarks run them.
func Names() []string {
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name
	}
	return names
}
