package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hybridkv/hybridkv/internal/certs"
	"github.com/hybridkv/hybridkv/internal/clientcores"
	"github.com/hybridkv/hybridkv/internal/transport"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Level is an operation's consistency.
type Level = wire.Level

// The consistency levels.
const (
	Strong = wire.Strong
	Weak   = wire.Weak
)

// Kind is what an operation does.
type Kind = wire.OpKind

// The operation kinds.
const (
	Get    = wire.Get
	Put    = wire.Put
	Delete = wire.Delete
)

// Revision is a key's version as etcd counts it.
type Revision = wire.Revision

// Replica locates one replica of the cluster.
type Replica struct {
	ID   uint64
	Addr string
	Site uint32
}

// Config describes a Client.
type Config struct {
	Protocol string
	Replicas []Replica
	// Site is the client's site; the replica at the same site is its
	// closest (weak reads go there under the hybrid protocols).
	Site uint32
	// Delay emulates wide-area latency on the client's own messages.
	Delay *DelayModel
	// Faults, when set, are fault rules the client's links obey (cut off
	// from chosen replicas, lossy or slow links), changeable while the
	// client runs; nil gives the client a rule set of its own, reachable
	// through Client.Faults.
	Faults *Faults
	// FlushDelay lets the transport gather messages before writing.
	FlushDelay time.Duration
	// Tick is the period of the client's retry clock (default 10ms).
	Tick time.Duration
	// Retry re-sends an unanswered operation after this long (default 500ms).
	Retry time.Duration
	// Timeout fails an operation unanswered for this long (default 10s).
	Timeout time.Duration
	Logger  *slog.Logger
	// History, when set, records every operation for the consistency
	// checker (several clients may share one).
	History *History
	// TLS, when set, is the client's mutual TLS: its certificate and the
	// CA pool (RootCAs) that verifies the replicas. Each replica is
	// verified as replica-<id>.hybridkv, the name its certificate carries.
	TLS *tls.Config
	// AckWeakWritesOnLog has the leader answer weak writes once its own
	// log holds them, before any other replica does (MongoDB's write
	// concern w:1): a round trip less from a far site, and a write lost
	// if the leader fails before it is replicated. Only protocols whose
	// weak writes go to the leader alone take it (curp-ht, raft-ht,
	// mongo, pileus-ht); by default a weak write is answered once
	// committed.
	AckWeakWritesOnLog bool
}

// Errors returned by operations.
var (
	ErrTimeout = errors.New("client: operation timed out")
	ErrClosed  = errors.New("client: closed")
)

// Result is the outcome of an asynchronous operation.
type Result struct {
	Found bool
	Value []byte
	// Revision is the key's version a Get found (the slots of its last
	// write and creation, its writes since), when the replica that
	// answered knew it: zero for a weak read answered from the session's
	// own write not yet applied.
	Revision Revision
	// Slot is the log index the operation took, when known.
	Slot uint64
	// Path says how it completed (fast path, slow path, weak).
	Path Path
	// Reason says why a strong operation took the slow path.
	Reason SlowReason
	// Latency is from submission to completion.
	Latency time.Duration
	// Err is ErrTimeout, ErrClosed or a context error on failure.
	Err error
}

// Client is one client process's view of a cluster. Its methods are safe for
// concurrent use.
type Client struct {
	cfg      Config
	proto    clientcores.Protocol
	id       wire.NodeID
	tr       *transport.Transport
	loop     *loop
	closeMu  sync.Mutex
	closed   bool
	stopped  chan struct{}
	sessions rand.Rand
	mu       sync.Mutex
}

// New connects to the cluster. It does not wait for the cluster to be ready:
// operations are retried until it is.
func New(cfg Config) (*Client, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	proto, err := clientcores.Lookup(cfg.Protocol)
	if err == nil && cfg.AckWeakWritesOnLog {
		proto, err = proto.AckingOnLog()
	}
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	c := &Client{
		cfg:      cfg,
		proto:    proto,
		id:       wire.FirstClientID + wire.NodeID(rand.Uint64N(1<<62)),
		stopped:  make(chan struct{}),
		sessions: *rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	replicas := make([]wire.NodeID, len(cfg.Replicas))
	peers := make(map[wire.NodeID]transport.Peer, len(cfg.Replicas))
	closest := wire.NodeID(0)
	for i, r := range cfg.Replicas {
		replicas[i] = wire.NodeID(r.ID)
		peers[wire.NodeID(r.ID)] = transport.Peer{Addr: r.Addr, Site: r.Site}
		if r.Site == cfg.Site && closest == 0 {
			closest = wire.NodeID(r.ID)
		}
	}
	core := proto.New(clientcores.Options{
		ID: c.id, Replicas: replicas, Closest: closest,
		RetryTicks: int(cfg.Retry / cfg.Tick),
	})
	c.loop = newLoop(core, cfg)
	c.tr, err = transport.New(transport.Config{
		Self: c.id, Site: cfg.Site, Peers: peers,
		Delay: cfg.Delay, Faults: cfg.Faults, FlushDelay: cfg.FlushDelay, Logger: cfg.Logger,
		TLS: clientTLS(cfg.TLS),
	}, c.loop.inbox.Put)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	go func() {
		defer close(c.stopped)
		c.loop.run(c.tr.SendAll)
	}()
	c.awaitConnections(replicas, cfg.Retry)
	return c, nil
}

// awaitConnections gives the transport a moment to connect, so that the
// first operations are not sent into the void and left to the retry timer.
// A cluster that is not up yet is no error: operations retry until it is.
func (c *Client) awaitConnections(replicas []wire.NodeID, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		connected := 0
		for _, r := range replicas {
			if c.tr.Connected(r) {
				connected++
			}
		}
		if connected == len(replicas) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (cfg *Config) defaults() error {
	if len(cfg.Replicas) == 0 {
		return errors.New("client: no replicas configured")
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 10 * time.Millisecond
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 500 * time.Millisecond
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// WeakAsStrong reports whether the protocol serves weak operations as strong.
func (c *Client) WeakAsStrong() bool { return c.proto.WeakAsStrong }

// Leader returns the replica the client currently believes leads, or 0.
func (c *Client) Leader() uint64 { return c.loop.leader.Load() }

// Faults returns the fault rules of the client's links, for cutting it off
// from chosen replicas or slowing its links while it runs.
func (c *Client) Faults() *Faults { return c.tr.Faults() }

// ID returns the client's node ID.
func (c *Client) ID() uint64 { return uint64(c.id) }

// NewSession opens a session with a fresh random identity.
func (c *Client) NewSession() *Session {
	c.mu.Lock()
	id := c.sessions.Uint64() | 1 // never zero
	c.mu.Unlock()
	return &Session{c: c, id: id}
}

// Close fails every operation still in flight with ErrClosed and closes the
// connections.
func (c *Client) Close() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.loop.stop()
	<-c.stopped
	return c.tr.Close()
}

// clientTLS dials each replica with base, verified under the replica's name.
func clientTLS(base *tls.Config) *transport.TLS {
	if base == nil {
		return nil
	}
	return &transport.TLS{Client: func(peer wire.NodeID) *tls.Config {
		c := base.Clone()
		c.ServerName = certs.ServerName(uint64(peer))
		return c
	}}
}
