package protocols_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireSwarmSeedClean replays one seed of the checked simulation under a
// swarm profile's faults (with power cuts if cuts is set, as
// TestCheckedPowerCuts draws them), as it was drawn when it found a bug
// (before the targeted kinds), and requires a clean history.
func requireSwarmSeedClean(t *testing.T, protocol string, n int, seed uint64, cuts bool) {
	t.Helper()
	res := checkedRun(t, protocol, n, seed, mutation{faults: true, swarm: true, powerCuts: cuts, firstKinds: true})
	require.NoError(t, res.Err, "%s n=%d seed %d", protocol, n, seed)
	require.True(t, res.Clean(), "%s n=%d seed %d: %v\nfaults:\n%s", protocol, n, seed, res.Violations, res.faults)
}

// TestRestartAfterCompactionAheadOfCommit replays the swarm seed that
// found it (CURP-HT, N = 3, seed 38, compacting every few entries): a
// replica snapshotted its state at the applied index while the hard state
// committing that index was still on its way to the disk, crashed, and
// could not restart (raft: "state.commit 26 is out of range [28, 33]").
// A compaction now waits for the saved commit index, and a restart raises
// a commit index left behind its snapshot.
func TestRestartAfterCompactionAheadOfCommit(t *testing.T) {
	requireSwarmSeedClean(t, "curp-ht", 3, 38, false)
}

// TestPowerCutAfterCompactionKeepsWrites replays the swarm power-cut seeds
// that found it (N = 5, compacting every 20 entries, sessions expiring
// after 2.5 s). A witness log drops no record when its operation applies;
// after a power cut every replica restored a snapshot that had forgotten
// the sessions expired before it, took the records of their long-applied
// operations for pending ones, and the new leader's recovery logged them
// again: writes of the first second took effect once more over later ones
// (C2, W4, W5, S1). The witness log is now rewritten with the live records
// before each snapshot, compaction or installed.
func TestPowerCutAfterCompactionKeepsWrites(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		seed     uint64
	}{{"curp", 66}, {"curp-ht", 66}, {"curp-ho", 66}, {"curp", 49}} {
		t.Run(fmt.Sprintf("%s/n=5/seed=%d", tc.protocol, tc.seed), func(t *testing.T) {
			requireSwarmSeedClean(t, tc.protocol, 5, tc.seed, true)
		})
	}
}
