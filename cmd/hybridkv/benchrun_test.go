package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/config"
)

func TestParseSweep(t *testing.T) {
	sw, err := parseSweep("zipf=0, 0.6,0.99,1,1.20,2")
	require.NoError(t, err)
	require.Equal(t, "zipf", sw.param.name)
	require.Equal(t, []string{"0", "0.6", "0.99", "1", "1.2", "2"}, sw.values)
	require.Equal(t, []float64{0, 0.6, 0.99, 1, 1.2, 2}, sw.nums)
	require.Equal(t, "zipf (theta)", sw.param.axis())

	sw, err = parseSweep("conflicts=0,10,100")
	require.NoError(t, err)
	require.Equal(t, []string{"0", "10", "100"}, sw.values)
	require.Equal(t, "conflicts (%)", sw.param.axis())

	for _, bad := range []string{"zipf=-0.5", "zipf=NaN", "zipf=Inf", "zipf=", "threads=1.5", "conflicts=-1", "conflict=5", "zipf"} {
		_, err := parseSweep(bad)
		require.Error(t, err, bad)
	}
	_, err = parseSweep("skew=1")
	require.ErrorContains(t, err, "threads, pendings, batch-delay, weak-ratio, zipf, conflicts")
}

// TestSweepPointsApply: each value lands in the field its flag sets, and
// the label names the parameter and the value.
func TestSweepPointsApply(t *testing.T) {
	check := map[string]func(config.Config) float64{
		"threads":     func(c config.Config) float64 { return float64(c.Clients.Threads) },
		"pendings":    func(c config.Config) float64 { return float64(c.Bench.Pendings) },
		"batch-delay": func(c config.Config) float64 { return float64(c.Raft.BatchDelayUs) },
		"weak-ratio":  func(c config.Config) float64 { return float64(c.Bench.WeakRatio) },
		"zipf":        func(c config.Config) float64 { return c.Bench.ZipfSkew },
		"conflicts":   func(c config.Config) float64 { return float64(c.Bench.Conflicts) },
	}
	require.Len(t, sweepParams, len(check))
	for _, p := range sweepParams {
		value := "7"
		if p.fractional {
			value = "1.5"
		}
		sw, err := parseSweep(p.name + "=" + value)
		require.NoError(t, err)
		r := benchRun{cfg: config.Default(), names: []string{"raft"}, sweep: sw}
		cfg, label := r.point(0, "raft")
		require.Equal(t, p.name+"="+value, label)
		require.Equal(t, sw.nums[0], check[p.name](cfg), p.name)
		require.Equal(t, "raft", cfg.Protocol)
		require.Contains(t, sweepHelp(), p.name, "the help lists %s", p.name)
	}
}

// TestSweepChecksEveryPointFirst: a value out of range fails the sweep
// before its first run.
func TestSweepChecksEveryPointFirst(t *testing.T) {
	for _, spec := range []string{"zipf=0.5,2.5", "conflicts=0,150"} {
		sw, err := parseSweep(spec)
		require.NoError(t, err)
		dir := filepath.Join(t.TempDir(), "out")
		r := benchRun{cfg: config.Default(), names: []string{"raft"}, sweep: sw, dir: dir}
		require.ErrorContains(t, r.run(context.Background()), "invalid configuration for raft", spec)
		_, err = os.Stat(dir)
		require.True(t, os.IsNotExist(err), "%s: nothing written", spec)
	}
}
