package bench

import (
	"context"
	"net/http"
)

// ScrapeMetrics reads one replica's metrics as the benchmark's scraper
// does, for the tests that start replicas themselves.
func ScrapeMetrics(ctx context.Context, debugAddr string) (map[string]float64, error) {
	return (&scraper{client: http.DefaultClient}).scrape(ctx, debugAddr)
}
