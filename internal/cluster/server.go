package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/disk"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/runtime"
	"github.com/hybridkv/hybridkv/internal/transport"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// ServerOptions say where a replica keeps its state and whether it may
// start a new cluster.
type ServerOptions struct {
	// DataDir overrides the configuration's data directory for the replica.
	DataDir string
	// Bootstrap lets a replica whose data directory is blank start a new
	// cluster. A data directory that holds state is resumed from, whatever
	// Bootstrap says.
	Bootstrap bool
}

// ServerStatus is what a replica process serves at /status.
type ServerStatus struct {
	protocol.Status
	Disk raftlog.DiskStats `json:"disk"`
}

// Server is one replica process's replica and its disk.
type Server struct {
	*runtime.Replica
	Disk *disk.Disk
}

// Run runs the replica until ctx ends, then releases its disk.
func (s *Server) Run(ctx context.Context) error {
	err := s.Replica.Run(ctx)
	if cerr := s.Disk.Close(); err == nil {
		err = cerr
	}
	return err
}

// NewServer builds replica id of cfg on its data directory, listening on
// its configured address.
func NewServer(cfg *config.Config, id uint64, opts ServerOptions, logger *slog.Logger) (*Server, error) {
	proto, err := protocols.Lookup(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	self, ok := findReplica(cfg, id)
	if !ok {
		return nil, fmt.Errorf("replica %d is not in the configuration", id)
	}
	dir := opts.DataDir
	if dir == "" {
		dir = cfg.DataDir(id)
	}
	d, err := disk.Open(disk.Options{Dir: dir, Fsync: cfg.Storage.Fsync, Logger: logger})
	if err != nil {
		return nil, err
	}
	var rep *runtime.Replica
	records, err := d.Records()
	if err == nil {
		rep, err = newReplica(cfg, self, proto, d, records, opts.Bootstrap, logger)
	}
	if errors.Is(err, raftlog.ErrBlankDisk) {
		err = fmt.Errorf("replica %d: data dir %s holds no state and --bootstrap was not given. "+
			"If this is a new cluster, start every replica with --bootstrap once. "+
			"If this replica lost its disk, it must not rejoin blank (nor from an old copy): it could vote "+
			"twice in a term and elect a leader without committed writes. hybridkv has no membership change "+
			"to replace it yet: the cluster keeps serving without it while at most f replicas are down", id, dir)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return &Server{Replica: rep, Disk: d}, nil
}

func newReplica(cfg *config.Config, self config.Replica, proto protocols.Protocol, d raftlog.Disk,
	records witness.Log, bootstrap bool, logger *slog.Logger) (*runtime.Replica, error) {
	id := self.ID
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
		Disk:           d,
		Bootstrap:      bootstrap,
		Records:        records,
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
