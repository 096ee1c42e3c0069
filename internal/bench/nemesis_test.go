package bench_test

import (
	"context"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
)

var nemesisLong = flag.Bool("nemesis-long", false,
	"run the nemesis test for 10 minutes per protocol (give go test a -timeout of an hour)")

// TestNemesisRealProcesses runs every protocol as three replica processes
// under load while a nemesis kills, pauses, partitions, slows and
// restarts them: every fault is injected and healed, the whole history
// checks clean, the final strong read of every written key succeeds (no
// acknowledged write lost) and the replicas converge.
func TestNemesisRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	// 27 s: a fault that restarts processes keeps 7 s from the end, and
	// these seeds' schedules then still hold every kind of fault.
	duration := 27.0
	if *nemesisLong {
		duration = 600
	}
	// Seeds whose short schedule holds every kind of fault, chosen to vary
	// the partition (isolate, split, client cut off from the leader) and
	// link (slow, lossy) variants across protocols.
	seeds := []uint64{24, 32, 13, 37}
	for i, name := range protocols.ProcessTestNames() {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Protocol = name
			cfg.Network.OneWayMs = 5
			cfg.Bench.WarmupS = 1
			cfg.Bench.DurationS = duration
			cfg.Bench.Seed = seeds[i%len(seeds)]
			dir := t.TempDir()
			rep, verdict, err := bench.Run(context.Background(), bench.Options{
				Config: cfg, Binary: binary, WorkDir: dir,
				HistoryPath: filepath.Join(dir, "history"),
				Nemesis:     &bench.Nemesis{Kinds: bench.NemesisKinds, Seed: cfg.Bench.Seed},
			})
			require.NoError(t, err)
			var table strings.Builder
			require.NoError(t, rep.WriteTable(&table))
			t.Log(table.String())
			require.True(t, verdict.Clean(), verdict.Summary())

			kinds := map[string]bool{}
			for _, f := range rep.Faults {
				kinds[f.Kind] = true
				require.Greater(t, f.HealedS, f.AtS, "fault %s healed", f.What)
			}
			require.Len(t, kinds, len(bench.NemesisKinds), "every kind of fault was injected")
			require.NotNil(t, rep.Timeline)
			notes := strings.Join(rep.Notes, "\n")
			require.Contains(t, notes, "read strongly after the run, 0 failed")
			require.Contains(t, notes, "replicas converged: 3 running")
		})
	}
}
