// Package clientcores names every protocol hybridkv can run, builds its
// client core and declares the guarantees it claims (package guarantees),
// which the checker verifies on every checked run: the list of protocols
// the client library, the server, the simulator and the benchmark agree on
// (package protocols adds each one's replica core). It links no replica
// code.
package clientcores

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curpclient"
	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/hoclient"
	"github.com/hybridkv/hybridkv/internal/htclient"
	"github.com/hybridkv/hybridkv/internal/raftclient"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Options configure a client core.
type Options struct {
	ID       wire.NodeID
	Replicas []wire.NodeID
	// Closest is the replica nearest to the client (weak reads go there).
	Closest    wire.NodeID
	RetryTicks int
}

// Protocol is one protocol's name, client core and traits.
type Protocol struct {
	Name string
	New  func(Options) clientcore.Core
	// WeakAsStrong is set for protocols with no weak path: they serve weak
	// operations as strong ones, and reports say so.
	WeakAsStrong bool
	// Claims are the guarantees the protocol promises; the checker
	// verifies exactly these on every checked run. Every protocol declares
	// a non-empty Set.
	Claims guarantees.Claims
}

var all = []Protocol{
	{
		Name: "curp",
		New:  func(o Options) clientcore.Core { return curpclient.New(o.curp()) },
		// Plain CURP has no weak path: it serves weak operations as strong.
		WeakAsStrong: true,
		Claims: guarantees.Claims{Set: guarantees.All,
			WeakWriteDurability: "served as strong: acknowledged once a superquorum recorded it (fast path; a new leader recovers it) or once committed"},
	},
	{
		Name: "curp-ht",
		New:  func(o Options) clientcore.Core { return htclient.New(o.curp(), o.closest()) },
		Claims: guarantees.Claims{Set: guarantees.All,
			WeakWriteDurability: "committed before acknowledged (the leader answers once it is committed and applied)"},
	},
	{
		Name: "curp-ho",
		New:  func(o Options) clientcore.Core { return hoclient.New(o.curp(), o.closest()) },
		// A strong read may return another session's weak write that the
		// replicas pooled but the log does not hold yet.
		Claims: guarantees.Claims{Set: guarantees.All, EarlyStrongVisibility: true,
			WeakWriteDurability: "acknowledged by the closest replica once it pooled it, before it is logged; durable against replica failures " +
				"once committed, or once a later strong op of its session completes (which shows it committed or pooled at a superquorum)"},
	},
	{
		Name:         "raft",
		New:          func(o Options) clientcore.Core { return raftclient.New(o.Replicas, o.RetryTicks) },
		WeakAsStrong: true,
		Claims: guarantees.Claims{Set: guarantees.All,
			WeakWriteDurability: "served as strong: committed before acknowledged"},
	},
}

// curp is what CURP's client, and so each hybrid's, is built from.
func (o Options) curp() curpclient.Config {
	return curpclient.Config{ID: o.ID, Replicas: o.Replicas, RetryTicks: o.RetryTicks}
}

// closest falls back to the first replica when the client's site has none.
func (o Options) closest() wire.NodeID {
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
