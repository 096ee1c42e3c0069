package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/certs"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/disk"
	"github.com/hybridkv/hybridkv/internal/node"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/raftlog"
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
	// Insecure lets a replica listen on a non-loopback address without
	// TLS.
	Insecure bool
}

// ServerStatus is what a replica process serves at /status.
type ServerStatus struct {
	protocol.Status
	Disk raftlog.DiskStats `json:"disk"`
}

// Server is one replica process's replica and its disk.
type Server struct {
	*node.Node
	Disk *disk.Disk
}

// Run runs the replica until ctx ends, then releases its disk.
func (s *Server) Run(ctx context.Context) error {
	err := s.Node.Run(ctx)
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
	if err := checkExposure(cfg, self, opts.Insecure); err != nil {
		return nil, err
	}
	tlsCfg, err := replicaTLS(cfg, id)
	if err != nil {
		return nil, err
	}
	dir := opts.DataDir
	if dir == "" {
		dir = cfg.DataDir(id)
	}
	d, err := disk.Open(disk.Options{Dir: dir, Fsync: cfg.Storage.Fsync, Logger: logger})
	if err != nil {
		return nil, err
	}
	var rep *node.Node
	records, err := d.Records()
	if err == nil {
		rep, err = newReplica(cfg, self, proto, d, records, tlsCfg, opts.Bootstrap, logger)
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
	return &Server{Node: rep, Disk: d}, nil
}

func newReplica(cfg *config.Config, self config.Replica, proto protocols.Protocol, d raftlog.Disk,
	records witness.Log, tlsCfg *transport.TLS, bootstrap bool, logger *slog.Logger) (*node.Node, error) {
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
	core, err := proto.NewReplica(coreconfig.Config{
		ID:             wire.NodeID(id),
		Peers:          peers,
		ElectionTicks:  cfg.Raft.ElectionTicks,
		HeartbeatTicks: cfg.Raft.HeartbeatTicks,
		Rand:           rand.New(rand.NewPCG(rand.Uint64(), id)),
		Disk:           d,
		Bootstrap:      bootstrap,
		Records:        records,

		SessionExpiryTicks: cfg.Raft.SessionExpiryTicks(),
	}, protocols.ReplicaOptions{MaxBatch: cfg.Raft.MaxBatch, Logger: logger})
	if err != nil {
		return nil, err
	}
	return node.New(node.Config{
		Core: core,
		Transport: transport.Config{
			Self:       wire.NodeID(id),
			Site:       site,
			Listen:     self.Addr,
			Peers:      dial,
			Delay:      delayModel(cfg, id),
			FlushDelay: cfg.Network.FlushDelay(),
			TLS:        tlsCfg,
			Logger:     logger,
		},
		Tick:       cfg.Raft.Tick(),
		BatchDelay: cfg.Raft.BatchDelay(),
		SyncDelay:  cfg.Storage.SyncDelay(),
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

// checkExposure refuses to serve plain TCP on an address other hosts can
// reach, unless told to.
func checkExposure(cfg *config.Config, self config.Replica, insecure bool) error {
	if cfg.TLS.Enabled() || insecure {
		return nil
	}
	host, _, err := net.SplitHostPort(self.Addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("replica %d would listen on %s without TLS: anyone who reaches it could speak for a replica; "+
		"configure tls (see hybridkv certs) or pass --insecure", self.ID, self.Addr)
}

// replicaTLS is replica id's mutual TLS, or nil without TLS.
func replicaTLS(cfg *config.Config, id uint64) (*transport.TLS, error) {
	if !cfg.TLS.Enabled() {
		return nil, nil
	}
	certFile, keyFile := cfg.TLS.ForReplica(id)
	cert, pool, err := certs.Files{CA: cfg.TLS.CA, Cert: certFile, Key: keyFile}.Load()
	if err != nil {
		return nil, fmt.Errorf("replica %d: %w", id, err)
	}
	return &transport.TLS{
		Server:    certs.ServerConfig(cert, pool),
		Client:    func(peer wire.NodeID) *tls.Config { return certs.ClientConfig(cert, pool, uint64(peer)) },
		Authorize: certs.Authorize,
	}, nil
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

		AckWeakWritesOnLog: cfg.Client.AckWeakWritesOnLog(),
	}
	if cfg.TLS.Enabled() {
		certFile, keyFile := cfg.TLS.ForClient(site)
		cert, pool, err := certs.Files{CA: cfg.TLS.CA, Cert: certFile, Key: keyFile}.Load()
		if err != nil {
			return client.Config{}, fmt.Errorf("client at %s: %w", site, err)
		}
		cc.TLS = certs.ClientConfig(cert, pool, 0)
	}
	for _, r := range cfg.Replicas {
		rs, _ := cfg.SiteIndex(r.Site)
		cc.Replicas = append(cc.Replicas, client.Replica{ID: r.ID, Addr: r.Addr, Site: rs})
	}
	return cc, nil
}

// GenerateTLS writes a CA and certificates for every replica and client
// site of cfg into dir and turns cfg's TLS on with them.
func GenerateTLS(cfg *config.Config, dir string) error {
	layout := certs.Layout{Dir: dir}
	var replicas []certs.Replica
	for _, r := range cfg.Replicas {
		replicas = append(replicas, certs.Replica{ID: r.ID, Addr: r.Addr})
	}
	if err := layout.Generate(replicas, cfg.Sites, 365*24*time.Hour); err != nil {
		return err
	}
	cfg.TLS = TLSFilesFor(layout)
	return nil
}

// TLSFilesFor is the configuration naming the certificates of layout.
func TLSFilesFor(layout certs.Layout) config.TLSFiles {
	replica, client := layout.ReplicaPattern(), layout.Client("{site}")
	return config.TLSFiles{CA: layout.CA(), Cert: replica.Cert, Key: replica.Key,
		ClientCert: client.Cert, ClientKey: client.Key}
}
