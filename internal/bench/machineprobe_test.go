package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// TestMachineProbeBesideARun: a run with the machine probe reports its
// speeds in its over-time intervals (10 s long for so short a run) and
// what the probe cost, and the probe's process is gone when the run
// returns.
func TestMachineProbeBesideARun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	cfg := config.Default()
	cfg.Protocol = "raft"
	cfg.Network.OneWayMs = 1
	cfg.Bench.WarmupS = 0.5
	// The probe first lays out its 128 MB cycle, a random swap per word,
	// each a cache miss: several seconds of CPU on this machine before its
	// first sample, at the lowest priority beside a run. The second
	// interval is the one looked at.
	cfg.Bench.DurationS = 20
	cfg.Bench.Pendings = 2
	// The probe runs at the lowest priority, so a machine whose cores other
	// tests keep busy (go test runs packages side by side) can starve it for
	// a whole short run: such a run is tried again, up to three times.
	var rep *stats.Report
	for try := 1; ; try++ {
		var err error
		rep, _, err = bench.Run(context.Background(), bench.Options{
			Config: cfg, Binary: binary, WorkDir: t.TempDir(), ProbeBinary: binary,
		})
		require.NoError(t, err)
		require.NotNil(t, rep.OverTime)
		if len(rep.OverTime.Intervals) > 1 && rep.OverTime.Intervals[1].LoadNanos > 0 || try == 3 {
			break
		}
		t.Logf("try %d: the probe got no CPU during the run (%s)", try, strings.Join(rep.Notes, "; "))
	}
	require.Greater(t, len(rep.OverTime.Intervals), 1, "%+v", rep.OverTime.Intervals)
	second := rep.OverTime.Intervals[1]
	require.Positive(t, second.LoadNanos, "%+v", rep.OverTime.Intervals)
	require.Positive(t, second.StepNanos)
	require.Greater(t, second.LoadNanos, second.StepNanos)
	require.Empty(t, processesRunning(t, binary+"\x00probe"), "the probe outlived its run")
	require.Regexp(t, `machine probe: \d+\.\d s of CPU over the \d+ s it ran \(\d+\.\d\d % of one core\), [1-9]\d* samples`,
		strings.Join(rep.Notes, "\n"), "the report says what the probe cost")
}

// processesRunning lists the processes whose command line holds args
// (NUL-separated, as /proc shows them).
func processesRunning(t *testing.T, args string) []string {
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	require.NotEmpty(t, cmdlines)
	var found []string
	for _, path := range cmdlines {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), args) {
			found = append(found, path)
		}
	}
	return found
}
