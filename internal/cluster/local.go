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

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	const lo, hi = 20000, 32000
	for range 1000 {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", lo+rand.IntN(hi-lo)))
		if err != nil {
			continue
		}
		l.Close()
		return l.Addr().String(), nil
	}
	return "", fmt.Errorf("no free loopback port in [%d, %d)", lo, hi)
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
