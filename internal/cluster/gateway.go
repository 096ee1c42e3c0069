package cluster

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/certs"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/etcdapi"
)

// GatewayOptions tune a gateway.
type GatewayOptions struct {
	// Listen is the address etcd clients connect to.
	Listen string
	// Insecure allows plain TCP on a non-loopback address.
	Insecure bool
	// History, when set, records every operation for the checker.
	History *client.History
}

// Gateway serves etcd's API for the clients at one site (package etcdapi).
type Gateway struct {
	api    *etcdapi.Server
	client *client.Client
	// ownsClient: Stop closes the client (StartGateway made it).
	ownsClient bool
	grpc       *grpc.Server
	lis        net.Listener
}

// StartGateway starts serving etcd's API at o.Listen as a client of cfg's
// cluster at site. With TLS configured it serves with the certificate of
// the site's replica (whose hosts it names) and requires client
// certificates from the cluster's CA; without TLS it listens on loopback
// addresses only, unless o.Insecure.
func StartGateway(cfg *config.Config, site string, o GatewayOptions, logger *slog.Logger) (*Gateway, error) {
	cc, err := ClientConfig(cfg, site)
	if err != nil {
		return nil, err
	}
	cc.Logger, cc.History = logger, o.History
	c, err := client.New(cc)
	if err != nil {
		return nil, err
	}
	g, err := ServeGateway(cfg, site, c, o, logger)
	if err != nil {
		c.Close()
		return nil, err
	}
	g.ownsClient = true
	return g, nil
}

// ServeGateway is StartGateway over a client the caller made, and closes:
// o.History is the client's business then.
func ServeGateway(cfg *config.Config, site string, c *client.Client, o GatewayOptions, logger *slog.Logger) (*Gateway, error) {
	self, ok := siteReplica(cfg, site)
	if !ok {
		return nil, fmt.Errorf("gateway: no replica at site %q", site)
	}
	var opts []grpc.ServerOption
	if cfg.TLS.Enabled() {
		certFile, keyFile := cfg.TLS.ForReplica(self.ID)
		cert, pool, err := certs.Files{CA: cfg.TLS.CA, Cert: certFile, Key: keyFile}.Load()
		if err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(certs.ServerConfig(cert, pool))))
	} else if !o.Insecure && !isLoopback(o.Listen) {
		return nil, fmt.Errorf("gateway: %s is not a loopback address: configure TLS (hybridkv certs) or pass --insecure", o.Listen)
	}
	lis, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	srv := etcdapi.New(etcdapi.Config{Client: c, Self: self.ID, Members: members(cfg),
		ClusterID: clusterID(cfg), Version: etcdapi.Version})
	g := &Gateway{api: srv, client: c, grpc: grpc.NewServer(append(opts, srv.ServerOptions()...)...), lis: lis}
	srv.Register(g.grpc)
	go func() {
		if err := g.grpc.Serve(lis); err != nil && logger != nil {
			logger.Warn("gateway stopped", "err", err)
		}
	}()
	return g, nil
}

// Addr is the address the gateway listens on.
func (g *Gateway) Addr() string { return g.lis.Addr().String() }

// Served reports what the gateway served (etcdapi.Server.Served).
func (g *Gateway) Served() string { return g.api.Served() }

// Stop stops serving and, if StartGateway made it, closes the gateway's
// client.
func (g *Gateway) Stop() {
	g.grpc.Stop()
	if g.ownsClient {
		g.client.Close()
	}
}

func siteReplica(cfg *config.Config, site string) (config.Replica, bool) {
	for _, r := range cfg.Replicas {
		if r.Site == site {
			return r, true
		}
	}
	return config.Replica{}, false
}

func members(cfg *config.Config) []etcdapi.Member {
	var ms []etcdapi.Member
	for _, r := range cfg.Replicas {
		ms = append(ms, etcdapi.Member{ID: r.ID, Name: fmt.Sprintf("replica-%d", r.ID), PeerURL: "http://" + r.Addr})
	}
	return ms
}

// clusterID names the cluster in response headers: a hash of its replicas'
// addresses, the same at every gateway of one configuration.
func clusterID(cfg *config.Config) uint64 {
	h := fnv.New64a()
	for _, r := range cfg.Replicas {
		fmt.Fprintf(h, "%d=%s;", r.ID, r.Addr)
	}
	return h.Sum64()
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}
