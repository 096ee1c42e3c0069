package experiment

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/tooltest"
)

// built is hybridkv, built by the first test that starts replicas as
// processes; TestMain removes it.
var built struct {
	once sync.Once
	path string
	err  error
}

func binary() (string, error) {
	built.once.Do(func() { built.path, built.err = tooltest.Hybridkv() })
	return built.path, built.err
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

// shortRuns makes every point a second's run over 5 ms links.
func shortRuns(c *config.Config) {
	c.Network.OneWayMs = 5
	c.Bench.WarmupS, c.Bench.DurationS = 0.5, 1
}

// TestConflictOnRealProcesses runs a quick conflict experiment's points
// for one protocol as replica processes, checked: every point's history
// checks clean, and what a run leaves on disk is only its report and logs.
func TestConflictOnRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin, err := binary()
	require.NoError(t, err)
	s, err := Lookup("conflict")
	require.NoError(t, err)
	o := Options{Base: config.Default(), Overlay: shortRuns, Dir: t.TempDir(), Runs: 1, Quick: true,
		Only: []string{"curp-ho"}, Command: "test", Build: Build(), Machine: Machine(),
		Run: BenchRunner{Binary: bin, Check: true, Build: "test"}.Run}
	res, err := Run(context.Background(), s, o)
	require.NoError(t, err)
	require.Equal(t, 3, res.Runs)
	require.Zero(t, res.Violations)
	md := readFile(t, filepath.Join(res.Dir, "conflict.md"))
	require.Contains(t, md, "Every one of the 3 checked runs' histories checked clean")
	require.Contains(t, md, "| curp-ho | 100 |")
	filepath.WalkDir(res.Dir, func(path string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		require.NotEqual(t, "data", d.Name(), "a replica's data directory was left: %s", path)
		require.NotEqual(t, "history", d.Name(), "a clean history was left: %s", path)
		return nil
	})
}

// TestExternalCluster runs an experiment's points against a cluster it did
// not start, as across machines.
func TestExternalCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin, err := binary()
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Protocol = "raft-ht"
	shortRuns(&cfg)
	ctx := context.Background()
	procs, err := cluster.Spawn(ctx, bin, &cfg, t.TempDir())
	require.NoError(t, err)
	defer procs.Stop()

	s, err := Lookup("t-property")
	require.NoError(t, err)
	o := Options{Base: cfg, Overlay: shortRuns, Dir: t.TempDir(), Runs: 1, Quick: true,
		Only: []string{"raft-ht"}, Command: "test", Run: BenchRunner{Check: true}.Run}
	res, err := Run(ctx, s, o)
	require.NoError(t, err)
	require.Equal(t, 3, res.Runs)
	require.Zero(t, res.Violations, readFile(t, filepath.Join(res.Dir, "t-property.md")))
	require.Zero(t, res.Failed)
	for _, p := range procs.List() {
		require.True(t, p.Running(), "the external cluster's replicas kept running")
	}
}

// TestRunStartsAfreshAfterACutAttempt: an attempt at a point that was cut
// short without cleaning up (the experiment killed) leaves its replicas'
// data directories and logs in the point's directory. Resumed, the point
// used to start its replicas from that data, an earlier cluster's log and
// state (two points of an evaluation ran on a store preloaded twice); it
// now starts from nothing, as every other run does.
func TestRunStartsAfreshAfterACutAttempt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin, err := binary()
	require.NoError(t, err)
	s, err := Lookup("t-property")
	require.NoError(t, err)
	o := Options{Base: config.Default(), Overlay: shortRuns, Quick: true}
	j := s.job(Point{Protocol: "raft-ht", Value: 0, Run: 1}, o, t.TempDir())
	// What the cut attempt left: a data directory per replica holding no
	// state a replica can start from, and a log.
	for id := 1; id <= 3; id++ {
		data := filepath.Join(j.Dir, "logs", "data", "replica-"+strconv.Itoa(id))
		require.NoError(t, os.MkdirAll(data, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(j.Dir, "logs", "replica-"+strconv.Itoa(id)+".log"),
			[]byte("replica from the cut attempt\n"), 0o644))
	}
	res, err := BenchRunner{Binary: bin, Check: true, Build: "test"}.Run(context.Background(), j)
	require.NoError(t, err)
	require.Empty(t, res.Violation)
	require.NotZero(t, res.Report.Ops)
	for id := 1; id <= 3; id++ {
		log := readFile(t, filepath.Join(j.Dir, "logs", "replica-"+strconv.Itoa(id)+".log"))
		require.NotContains(t, log, "cut attempt", "replica %d's log goes on from the cut attempt's", id)
	}
}
