package cluster

import (
	"fmt"
	"log/slog"
	"math/rand/v2"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/runtime"
	"github.com/hybridkv/hybridkv/internal/transport"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// NewServer builds replica id of cfg, listening on its configured address.
func NewServer(cfg *config.Config, id uint64, logger *slog.Logger) (*runtime.Replica, error) {
	proto, err := protocols.Lookup(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	self, ok := findReplica(cfg, id)
	if !ok {
		return nil, fmt.Errorf("replica %d is not in the configuration", id)
	}
	site, _ := cfg.SiteIndex(self.Site)
	var peers []wire.NodeID
	dial := make(map[wire.NodeID]transport.Peer)
	for _, r := range cfg.Replicas {
		peers = append(peers, wire.NodeID(r.ID))
		if r.ID != id {
			s, _ := cfg.SiteIndex(r.Site)
			dial[wire.NodeID(r.ID)] = transport.Peer{Addr: r.Addr, Site: s}
		}
	}
	core, err := proto.NewReplica(protocol.ReplicaConfig{
		ID:             wire.NodeID(id),
		Peers:          peers,
		ElectionTicks:  cfg.Raft.ElectionTicks,
		HeartbeatTicks: cfg.Raft.HeartbeatTicks,
		Rand:           rand.New(rand.NewPCG(rand.Uint64(), id)),
		Disk:           raftlog.NewMemDisk(),
		Bootstrap:      true,
	}, protocols.ReplicaOptions{MaxBatch: cfg.Raft.MaxBatch, Logger: logger})
	if err != nil {
		return nil, err
	}
	return runtime.NewReplica(runtime.ReplicaConfig{
		Core: core,
		Transport: transport.Config{
			Self:       wire.NodeID(id),
			Site:       site,
			Listen:     self.Addr,
			Peers:      dial,
			Delay:      delayModel(cfg, id),
			FlushDelay: cfg.Network.FlushDelay(),
			Logger:     logger,
		},
		Tick:       cfg.Raft.Tick(),
		BatchDelay: cfg.Raft.BatchDelay(),
	})
}

func findReplica(cfg *config.Config, id uint64) (config.Replica, bool) {
	for _, r := range cfg.Replicas {
		if r.ID == id {
			return r, true
		}
	}
	return config.Replica{}, false
}

func delayModel(cfg *config.Config, seed uint64) *transport.DelayModel {
	if !cfg.Network.Emulate {
		return nil
	}
	return transport.NewDelayModel(cfg.OneWay(), cfg.Network.Jitter(), seed)
}

// ClientConfig is the client configuration for a client at site.
func ClientConfig(cfg *config.Config, site string) (client.Config, error) {
	s, ok := cfg.SiteIndex(site)
	if !ok {
		return client.Config{}, fmt.Errorf("unknown client site %q", site)
	}
	cc := client.Config{
		Protocol:   cfg.Protocol,
		Site:       s,
		Delay:      delayModel(cfg, rand.Uint64()),
		FlushDelay: cfg.Network.FlushDelay(),
		Tick:       cfg.Raft.Tick(),
		Retry:      cfg.Client.Retry(),
		Timeout:    cfg.Client.Timeout(),
	}
	for _, r := range cfg.Replicas {
		rs, _ := cfg.SiteIndex(r.Site)
		cc.Replicas = append(cc.Replicas, client.Replica{ID: r.ID, Addr: r.Addr, Site: rs})
	}
	return cc, nil
}
