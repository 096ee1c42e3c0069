package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/runtime"
)

// Local is a cluster whose replicas all run inside this process.
type Local struct {
	Replicas []*runtime.Replica
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// FreePorts rewrites cfg's replica addresses to free loopback ports.
func FreePorts(cfg *config.Config) error {
	for i := range cfg.Replicas {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		cfg.Replicas[i].Addr = l.Addr().String()
		l.Close()
	}
	return nil
}

// StartLocal runs every replica of cfg in this process.
func StartLocal(cfg *config.Config, logger *slog.Logger) (*Local, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Local{cancel: cancel}
	for _, r := range cfg.Replicas {
		srv, err := NewServer(cfg, r.ID, logger.With("replica", r.ID))
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
