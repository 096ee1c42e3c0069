package bench_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// TestPreloadWritesEveryKeyOnce: with Preload every key is written once
// before the run, those writes are in the checked history, and the run's
// measurements count none of them.
func TestPreloadWritesEveryKeyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	cfg := config.Default()
	cfg.Protocol = "curp-ht"
	cfg.Network.OneWayMs = 2
	cfg.Bench.KeySpace = 3000
	cfg.Bench.Preload = true
	cfg.Bench.WarmupS = 0.2
	cfg.Bench.DurationS = 1
	cfg.Bench.Pendings = 4
	dir := t.TempDir()
	var measured *stats.Report
	rep, verdict, err := bench.Run(context.Background(), bench.Options{
		Config: cfg, Binary: binary, WorkDir: dir, HistoryPath: filepath.Join(dir, "history"),
		Measured: func(r *stats.Report) {
			require.NotContains(t, strings.Join(r.Notes, "\n"), "check:", "handed the report after its check")
			measured = r
		},
	})
	require.NoError(t, err)
	require.NotNil(t, measured, "the report was not handed over before the check")
	notes := strings.Join(rep.Notes, "\n")
	require.Contains(t, notes, "preload: wrote each of the 3000 keys once")
	require.Contains(t, notes, ", 0 failed")
	require.True(t, verdict.Clean(), verdict.Summary())
	// The checked history holds the load phase's writes besides the run's
	// operations (and the final read-back's reads).
	require.Greater(t, int64(verdict.Events), 3000+rep.Ops+rep.Excluded+rep.Failed)
}
