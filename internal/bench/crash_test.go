package bench_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/tooltest"
)

// binary is the hybridkv executable the real-process tests start replicas
// with, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	var err error
	if binary, err = tooltest.Hybridkv(); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(filepath.Dir(binary))
	os.Exit(code)
}

// TestCrashRestartRealProcesses runs every protocol as three replica
// processes under load, SIGKILLs a follower, the leader (a leaderless
// protocol's: the first client's replica) or every replica, and restarts
// them from their data directories: the whole history checks clean (the
// final strong read of every written key included), nothing failed, and
// the replicas converge.
func TestCrashRestartRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	for _, name := range protocols.ProcessTestNames() {
		for _, target := range bench.CrashTargets {
			t.Run(name+"/"+target, func(t *testing.T) {
				cfg := config.Default()
				cfg.Protocol = name
				cfg.Network.OneWayMs = 5
				cfg.Bench.WarmupS = 0.5
				cfg.Bench.DurationS = 3
				dir := t.TempDir()
				rep, verdict, err := bench.Run(context.Background(), bench.Options{
					Config: cfg, Binary: binary, WorkDir: dir,
					HistoryPath: filepath.Join(dir, "history"),
					Crash:       &bench.Crash{Target: target, After: 1500 * time.Millisecond, RestartAfter: 500 * time.Millisecond},
				})
				require.NoError(t, err)
				notes := strings.Join(rep.Notes, "\n")
				t.Log(notes)
				require.True(t, verdict.Clean(), verdict.Summary())
				require.Zero(t, rep.Failed)
				require.Contains(t, notes, "restarted from disk")
				require.Contains(t, notes, "replicas converged: 3 running")
				require.Contains(t, notes, "read strongly after the run, 0 failed")
				// The crash is in the report's fault record, healed at the
				// restart, with the throughput timeline around it.
				require.Len(t, rep.Faults, 1)
				require.Equal(t, "kill", rep.Faults[0].Kind)
				down := rep.Faults[0].HealedS - rep.Faults[0].AtS // the pause, then the restart
				require.GreaterOrEqual(t, down, 0.5)
				require.Less(t, down, 15.0)
				require.NotNil(t, rep.Timeline)
			})
		}
	}
}

// TestBlankDataDirIsRefused: a replica started on an empty data directory
// without --bootstrap does not start, and says how to proceed.
func TestBlankDataDirIsRefused(t *testing.T) {
	cfg := config.Default()
	raw, err := cfg.YAML()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	out, err := exec.Command(binary, "server", "--config", path, "--id", "2",
		"--data-dir", filepath.Join(t.TempDir(), "lost")).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "holds no state and --bootstrap was not given")
	require.Contains(t, string(out), "could vote twice in a term")
}

// TestRunStopsWhenInterrupted: a run whose context ends (Ctrl-C) returns at
// once, its replicas stopped. Closing the clients failed the operations in
// flight, each failure issued the next operation on the closed client, and
// that failed under the session's lock: the run hung for good.
func TestRunStopsWhenInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	cfg := config.Default()
	cfg.Network.OneWayMs = 5
	cfg.Bench.WarmupS = 0.5
	cfg.Bench.DurationS = 60
	cfg.Bench.Pendings = 4
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(2*time.Second, cancel)
	done := make(chan error, 1)
	go func() {
		_, _, err := bench.Run(ctx, bench.Options{Config: cfg, Binary: binary, WorkDir: t.TempDir()})
		done <- err
	}()
	// Stopping takes seconds (each replica is given 5 s to exit); a hang
	// is forever. On a loaded machine under the race detector the first
	// can approach half a minute, so the limit is generous, and a failure
	// shows where every goroutine was.
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(90 * time.Second):
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		t.Fatal("the run did not return after its context ended")
	}
	require.Equal(t, config.Default().Replicas, cfg.Replicas,
		"the run drew its replicas' addresses into the caller's configuration")
}
