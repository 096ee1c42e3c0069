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
	"github.com/hybridkv/hybridkv/internal/epaxosclient"
	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/hoclient"
	"github.com/hybridkv/hybridkv/internal/htclient"
	"github.com/hybridkv/hybridkv/internal/raftclient"
	"github.com/hybridkv/hybridkv/internal/rafthtclient"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Options configure a client core.
type Options struct {
	ID       wire.NodeID
	Replicas []wire.NodeID
	// Closest is the replica nearest to the client (weak reads go there).
	Closest    wire.NodeID
	RetryTicks int
	// AckWeakOnLog asks the leader to answer weak writes once it logged
	// them (set by Protocol.AckingOnLog).
	AckWeakOnLog bool
}

// Protocol is one protocol's name, client core and traits.
type Protocol struct {
	Name string
	New  func(Options) clientcore.Core
	// WeakAsStrong is set for protocols with no weak path: they serve weak
	// operations as strong ones, and reports say so.
	WeakAsStrong bool
	// Default marks the protocols a benchmark runs unless told which.
	Default bool
	// Claims are the guarantees the protocol promises; the checker
	// verifies exactly these on every checked run. Every protocol declares
	// a non-empty Set.
	Claims guarantees.Claims
	// Leaderless marks the protocols with no leader: every replica leads
	// the commands its clients send it, and reports itself as leader.
	Leaderless bool
	// CanAckOnLog marks the protocols whose leader logs weak writes, and
	// so can answer them once it logged them (see AckingOnLog).
	CanAckOnLog bool
}

// AckingOnLog returns the protocol with its leader answering weak writes
// once its own log holds them, before replication (wire.FlagAckOnLog;
// MongoDB's write concern w:1): a round trip less from a far site, and a
// write lost if the leader fails before it is replicated. Its claims say
// so, and the checker then owes nothing to an acknowledged weak write.
func (p Protocol) AckingOnLog() (Protocol, error) {
	if !p.CanAckOnLog {
		return Protocol{}, fmt.Errorf("protocol %s cannot acknowledge weak writes once the leader logged them: "+
			"its weak writes do not go through the leader alone (%s)", p.Name, strings.Join(AckOnLogNames(), ", ")+" can")
	}
	build := p.New
	p.New = func(o Options) clientcore.Core {
		o.AckWeakOnLog = true
		return build(o)
	}
	p.Claims.WeakWritesMayBeLost = true
	p.Claims.WeakWriteDurability = "acknowledged once the leader logged it, before replication: lost if the leader fails first"
	return p, nil
}

// AckOnLogNames lists the protocols that can acknowledge weak writes once
// the leader logged them.
func AckOnLogNames() []string {
	var names []string
	for _, p := range all {
		if p.CanAckOnLog {
			names = append(names, p.Name)
		}
	}
	return names
}

var all = []Protocol{
	{
		Name: "curp",
		New:  func(o Options) clientcore.Core { return curpclient.New(o.curp()) },
		// Plain CURP has no weak path: it serves weak operations as strong.
		WeakAsStrong: true,
		Default:      true,
		Claims: guarantees.Claims{Set: guarantees.All,
			WeakWriteDurability: "served as strong: acknowledged once a superquorum recorded it (fast path; a new leader recovers it) or once committed"},
	},
	{
		Name: "curp-ht",
		New: func(o Options) clientcore.Core {
			c := htclient.New(o.curp(), o.closest())
			if o.AckWeakOnLog {
				c.AckWeakWritesOnLog()
			}
			return c
		},
		Default:     true,
		CanAckOnLog: true,
		Claims:      guarantees.Claims{Set: guarantees.All, WeakWriteDurability: committedFirst},
	},
	{
		Name:    "curp-ho",
		New:     func(o Options) clientcore.Core { return hoclient.New(o.curp(), o.closest()) },
		Default: true,
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
		Default:      true,
		Claims: guarantees.Claims{Set: guarantees.All,
			WeakWriteDurability: "served as strong: committed before acknowledged"},
	},
	// The baselines on Raft-HT's server (package rafthtclient says how
	// each treats weak operations).
	{
		Name:        "raft-ht",
		New:         rafthtFamily(rafthtclient.RaftHT),
		CanAckOnLog: true,
		// Its cache gives read-your-writes and monotonic reads per key;
		// a read from a lagging replica may miss another key's write in
		// its causal past.
		Claims: guarantees.Claims{Set: raftHTClaims, WeakWriteDurability: committedFirst},
	},
	{
		Name:        "mongo",
		New:         rafthtFamily(rafthtclient.Mongo),
		CanAckOnLog: true,
		Claims:      guarantees.Claims{Set: guarantees.All, WeakWriteDurability: committedFirst},
	},
	{
		Name:   "pileus",
		New:    rafthtFamily(rafthtclient.Pileus),
		Claims: guarantees.Claims{Set: guarantees.All, WeakWriteDurability: "every write is strong: committed before acknowledged"},
	},
	{
		Name:        "pileus-ht",
		New:         rafthtFamily(rafthtclient.PileusHT),
		CanAckOnLog: true,
		Claims:      guarantees.Claims{Set: guarantees.All, WeakWriteDurability: committedFirst},
	},
	{
		Name: "epaxos",
		New: func(o Options) clientcore.Core {
			return epaxosclient.New(o.Replicas, o.closest(), o.RetryTicks, false)
		},
		// No weak path: weak operations are served as strong.
		WeakAsStrong: true,
		Leaderless:   true,
		Claims: guarantees.Claims{Set: guarantees.All,
			WeakWriteDurability: "served as strong: committed (pre-accepted by n-1 replicas or accepted by a majority) and executed before acknowledged"},
	},
	{
		Name: "epaxos-ho",
		New: func(o Options) clientcore.Core {
			return epaxosclient.New(o.Replicas, o.closest(), o.RetryTicks, true)
		},
		Leaderless: true,
		// Strong operations are ordered only where they conflict, as
		// EPaxos's: their real-time order is not part of causal order.
		Claims: guarantees.Claims{Set: guarantees.All, NoStrongRealTime: true, WeakWritesMayBeLost: true,
			WeakWriteDurability: "acknowledged by the closest replica once its record of the write's instance is durable, before any other replica has it; " +
				"survives that replica's restart; lost, or applied late by a later operation of its session that carries it, " +
				"if that replica is cut off before another received it and the others recover its instance as a no-op"},
	},
}

// raftHTClaims are Raft-HT's guarantees: all but monotonic writes,
// writes-follow-reads and causal visibility as the checker defines them
// (across sessions and keys), and C2.
const raftHTClaims = guarantees.All &^ (guarantees.W3 | guarantees.W4 | guarantees.W5 | guarantees.C2)

// committedFirst is the durability of weak writes logged by the leader
// and answered once committed and applied.
const committedFirst = "committed before acknowledged (the leader answers once it is committed and applied)"

// rafthtFamily builds the client of a protocol on Raft-HT's server.
func rafthtFamily(p rafthtclient.Policy) func(Options) clientcore.Core {
	return func(o Options) clientcore.Core {
		p.AckOnLog = o.AckWeakOnLog
		return rafthtclient.New(p, o.Replicas, o.closest(), o.RetryTicks)
	}
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

// DefaultNames lists the protocols a benchmark runs unless told which.
func DefaultNames() []string {
	var names []string
	for _, p := range all {
		if p.Default {
			names = append(names, p.Name)
		}
	}
	return names
}
