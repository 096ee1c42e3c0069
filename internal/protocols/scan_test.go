package protocols_test

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/wire"
)

var (
	scanSeeds = flag.Int("scan-seeds", 30, "seeds per protocol for TestCheckedScans")
	scanFirst = flag.Uint64("scan-first", 1, "first seed of TestCheckedScans")
)

// scanRun is the checked run of TestCheckedScans's seed.
func scanRun(seed uint64) mutation {
	return mutation{scans: true, faults: seed%2 == 0, swarm: true}
}

// TestCheckedScans: a quarter of the operations are scans over runs of
// the workload's keys (some cut by a limit, some keys or count only), half
// of them weak, among strong and weak puts, gets and deletes and a few
// transactions; every history is checked, for every protocol, N = 3 and 5,
// under the nemesis's faults for every other seed. Many scans of each
// level must complete, and every protocol with a weak path must answer
// weak scans on it, some of them with keys in them.
func TestCheckedScans(t *testing.T) {
	seeds := uint64(*scanSeeds)
	switch {
	case *long:
		seeds = 2000
	case testing.Short() || raceDetector:
		seeds = min(seeds, raceSeeds)
	}
	for _, name := range protocols.TestNames() {
		t.Run(name, func(t *testing.T) {
			p, err := protocols.Lookup(name)
			require.NoError(t, err)
			start := time.Now()
			var strong, weak, weakKeys int
			for seed := *scanFirst; seed < *scanFirst+seeds; seed++ {
				n := 3 + 2*int(seed/2%2)
				res := checkedRun(t, name, n, seed, scanRun(seed))
				require.NoError(t, res.Err, "seed %d", seed)
				require.True(t, res.Clean(), "seed %d (n=%d): %v\nfaults:\n%s", seed, n, res.Violations, res.faults)
				for _, e := range res.events {
					if e.Kind != wire.Scan || e.Outcome != history.OK {
						continue
					}
					_, r, err := e.Txn()
					require.NoError(t, err, "seed %d (n=%d)", seed, n)
					if e.Level == wire.Strong {
						strong++
						continue
					}
					weak++
					if len(r.Results[0].KVs) > 0 {
						weakKeys++
					}
				}
			}
			require.Greater(t, strong, int(seeds)*5, "strong scans completed")
			require.Greater(t, weak, int(seeds)*5, "weak scans completed")
			if !p.WeakAsStrong {
				require.Greater(t, weakKeys, int(seeds), "weak scans that returned keys")
			}
			t.Logf("%d seeds checked clean in %v; %d strong and %d weak scans completed, %d weak ones returned keys",
				seeds, time.Since(start).Round(time.Millisecond), strong, weak, weakKeys)
		})
	}
}
