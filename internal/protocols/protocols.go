// Package protocols builds every protocol's replica and client cores, so
// the server, the simulator and the benchmark agree on what "curp" means.
// The protocols' names and client cores are package clientcores', which
// the client library uses alone; this package adds each one's replica.
package protocols

import (
	"fmt"
	"log/slog"

	"github.com/hybridkv/hybridkv/internal/checker"
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/clientcores"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/curpho"
	"github.com/hybridkv/hybridkv/internal/curpht"
	"github.com/hybridkv/hybridkv/internal/epaxos"
	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftht"
	"github.com/hybridkv/hybridkv/internal/raftkv"
	"github.com/hybridkv/hybridkv/internal/smr"
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
type ClientOptions = clientcores.Options

// Protocol is one protocol's constructors and traits.
type Protocol struct {
	Name       string
	NewReplica func(coreconfig.Config, ReplicaOptions) (protocol.Replica, error)
	NewClient  func(ClientOptions) clientcore.Core
	// WeakAsStrong is set for protocols with no weak path: they serve weak
	// operations as strong ones, and reports say so.
	WeakAsStrong bool
	// Claims are the guarantees the protocol promises (see clientcores).
	Claims guarantees.Claims
	// Leaderless: every replica leads its own commands (see clientcores).
	Leaderless bool
}

// AckingOnLog returns the protocol with its leader answering weak writes
// once it logged them, and its claims saying what that costs (see
// clientcores.Protocol.AckingOnLog).
func (p Protocol) AckingOnLog() (Protocol, error) {
	c, err := clientcores.Lookup(p.Name)
	if err != nil {
		return Protocol{}, err
	}
	if c, err = c.AckingOnLog(); err != nil {
		return Protocol{}, err
	}
	p.NewClient, p.Claims = c.New, c.Claims
	return p, nil
}

// CheckOptions returns the checker's options for a history the protocol
// recorded: its claims, which the checker verifies exactly.
func (p Protocol) CheckOptions() checker.Options {
	return checker.Options{Claims: p.Claims}
}

// CheckOptions returns the checker's options for a history recorded by the
// protocol called name (see Protocol.CheckOptions).
func CheckOptions(name string) (checker.Options, error) {
	p, err := Lookup(name)
	if err != nil {
		return checker.Options{}, err
	}
	return p.CheckOptions(), nil
}

type newReplica = func(coreconfig.Config, ReplicaOptions) (protocol.Replica, error)

// replicas holds each protocol's replica core, by the name clientcores
// gives it.
var replicas = map[string]newReplica{
	"curp": curpFamily(func(cfg coreconfig.Config, o curp.Options) (protocol.Replica, error) {
		return curp.NewReplica(cfg, o)
	}),
	"curp-ht": curpFamily(func(cfg coreconfig.Config, o curp.Options) (protocol.Replica, error) {
		return curpht.NewReplica(cfg, o)
	}),
	"curp-ho": curpFamily(func(cfg coreconfig.Config, o curp.Options) (protocol.Replica, error) {
		return curpho.NewReplica(cfg, o)
	}),
	"raft": func(cfg coreconfig.Config, o ReplicaOptions) (protocol.Replica, error) {
		return raftkv.NewReplica(cfg, o.smr())
	},
	"raft-ht":   rafthtServer,
	"mongo":     rafthtServer,
	"pileus":    rafthtServer,
	"pileus-ht": rafthtServer,
	"epaxos":    epaxosServer(false),
	"epaxos-ho": epaxosServer(true),
}

// epaxosServer builds an EPaxos replica, with EPaxos-HO's weak path or
// without.
func epaxosServer(weakPath bool) newReplica {
	return func(cfg coreconfig.Config, o ReplicaOptions) (protocol.Replica, error) {
		return epaxos.NewReplica(cfg, epaxos.Options{MaxBatch: o.MaxBatch, CompactEvery: o.CompactEvery, Logger: o.Logger, WeakPath: weakPath})
	}
}

// rafthtServer builds the replica that Raft-HT and the causal-session
// baselines share; their clients tell them apart.
func rafthtServer(cfg coreconfig.Config, o ReplicaOptions) (protocol.Replica, error) {
	return raftht.NewReplica(cfg, o.smr())
}

// curpFamily builds a replica of CURP or of a hybrid protocol built on it.
func curpFamily(build func(coreconfig.Config, curp.Options) (protocol.Replica, error)) newReplica {
	return func(cfg coreconfig.Config, o ReplicaOptions) (protocol.Replica, error) {
		return build(cfg, curp.Options{MaxBatch: o.MaxBatch, Logger: o.Logger,
			CompactEvery: o.CompactEvery, CompactKeep: o.CompactKeep, MemoryKeep: o.MemoryKeep})
	}
}

// Lookup returns the protocol called name.
func Lookup(name string) (Protocol, error) {
	c, err := clientcores.Lookup(name)
	if err != nil {
		return Protocol{}, err
	}
	r := replicas[name]
	if r == nil {
		return Protocol{}, fmt.Errorf("protocol %q has no replica core", name)
	}
	if c.Claims.Set == 0 {
		// The checker would take an empty Set as every guarantee.
		return Protocol{}, fmt.Errorf("protocol %q claims no guarantee", name)
	}
	return Protocol{Name: name, NewReplica: r, NewClient: c.New, WeakAsStrong: c.WeakAsStrong, Claims: c.Claims,
		Leaderless: c.Leaderless}, nil
}

// Names lists the protocols in the order benchmarks run them.
func Names() []string { return clientcores.Names() }

// AckOnLogNames lists the protocols that can acknowledge weak writes once
// the leader logged them.
func AckOnLogNames() []string { return clientcores.AckOnLogNames() }

// DefaultNames lists the protocols a benchmark runs unless told which.
func DefaultNames() []string { return clientcores.DefaultNames() }
