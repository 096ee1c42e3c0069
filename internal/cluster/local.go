package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"sync"

	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocol"
)

// Local is a cluster whose replicas all run inside this process.
type Local struct {
	Replicas []*Server
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// FreePorts rewrites cfg's replica addresses to free loopback ports. The
// ports come from below Linux's ephemeral range (32768 and up): a port the
// kernel hands out for ":0" can be handed out again, between our check and
// the replica's bind, as the source port of some outgoing connection.
func FreePorts(cfg *config.Config) error {
	for i := range cfg.Replicas {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		cfg.Replicas[i].Addr = addr
	}
	return nil
}

const portsFrom, portsTo = 20000, 32000

// pickPort draws a port to try; a variable so tests can force repeats.
var pickPort = func() int { return portsFrom + rand.IntN(portsTo-portsFrom) }

// handedOut holds the addresses freeAddr returned: a port it found free is
// still free until its replica binds it, so a later draw of the same port
// (a replica's and a debug address's, once in a few hundred runs) would
// find it free again and give two servers one address.
var handedOut struct {
	sync.Mutex
	addrs map[string]bool
}

// freeAddr returns a loopback address whose port was free a moment ago
// and that it has not returned before.
func freeAddr() (string, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 1000 {
		addr := fmt.Sprintf("127.0.0.1:%d", pickPort())
		if handedOut.addrs[addr] {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		l.Close()
		if handedOut.addrs == nil {
			handedOut.addrs = make(map[string]bool)
		}
		handedOut.addrs[addr] = true
		return addr, nil
	}
	return "", fmt.Errorf("no free loopback port in [%d, %d)", portsFrom, portsTo)
}

// StartLocal runs every replica of cfg in this process, each with its data
// directory under dir, bootstrapping a new cluster if they are blank.
func StartLocal(cfg *config.Config, dir string, logger *slog.Logger) (*Local, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Local{cancel: cancel}
	for _, r := range cfg.Replicas {
		srv, err := NewServer(cfg, r.ID, ServerOptions{DataDir: filepath.Join(dir, fmt.Sprintf("replica-%d", r.ID)), Bootstrap: true},
			logger.With("replica", r.ID))
		if err != nil {
			l.Stop()
			return nil, fmt.Errorf("replica %d: %w", r.ID, err)
		}
		l.Replicas = append(l.Replicas, srv)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			srv.Run(ctx)
		}()
	}
	return l, nil
}

// Statuses returns every replica's status.
func (l *Local) Statuses() []protocol.Status {
	sts := make([]protocol.Status, len(l.Replicas))
	for i, r := range l.Replicas {
		sts[i] = r.Status()
	}
	return sts
}

// Stop stops every replica and waits for them.
func (l *Local) Stop() {
	l.cancel()
	l.wg.Wait()
}
