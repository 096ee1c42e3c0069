package bench

import (
	"context"
	"net/http"

	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/protocols"
)

// ScrapeMetrics reads one replica's metrics as the benchmark's scraper
// does, for the tests that start replicas themselves.
func ScrapeMetrics(ctx context.Context, debugAddr string) (map[string]float64, error) {
	return (&scraper{client: http.DefaultClient}).scrape(ctx, debugAddr)
}

// CrashVictims picks what a crash of target would kill in a run of
// protocol proto over procs, waiting for it as a run's crash does.
func CrashVictims(ctx context.Context, proto protocols.Protocol, procs *cluster.Processes, target string) ([]uint64, error) {
	return (&run{proto: proto, procs: procs}).victims(ctx, target)
}
