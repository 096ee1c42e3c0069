package protocols_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecordsOutlivingTheExpiryAreGivenUp replays the long mode's seed that
// found it (CURP-HO, N = 3, seed 8273, a leader crashed for 4 s under a
// 7.1 s session expiry): the leader went down holding the records of a
// session's writes, which the others applied; it came back, caught up
// from a snapshot taken after the session had expired, and handed the
// records to the new leader as stale, and two old writes took effect a
// second time over newer ones (X1). Such records are now given up (see
// curp's outlived), and the session's next operations, held behind a weak
// write of the forgotten session, go on after an expiry.
func TestRecordsOutlivingTheExpiryAreGivenUp(t *testing.T) {
	res := checkedRun(t, "curp-ho", 3, 8273, mutation{faults: true, swarm: true})
	require.NoError(t, res.Err)
	require.True(t, res.Clean(), "%v\nfaults:\n%s", res.Violations, res.faults)
}

// TestReadChoiceSkipsAReadThatCannotHaveCompleted replays the long mode's
// seed that found it (CURP-HO, N = 5, seed 7355, split witnesses): two
// strong reads of one key named different dependencies, an older write
// (40002.33) and a newer one (50002.23). The one naming the newer write
// (50002.31) completed on the fast path before a weak write (10002.34) was
// invoked ahead of the other read (10002.35) in its session, so the other
// cannot have completed with the older one. A new leader's replay placed
// the newer write after that read all the same (before its dependency
// was ruled out by the first read's choice); the cycle this closed was
// broken at the fast-path order, and the log put 10002.34 before the
// first read's session's earlier weak write 50002.29 (S1). Where both
// places close a cycle through the orders drawn, no place is chosen now.
func TestReadChoiceSkipsAReadThatCannotHaveCompleted(t *testing.T) {
	res := checkedRun(t, "curp-ho", 5, 7355, mutation{faults: true, swarm: true})
	require.NoError(t, res.Err)
	require.True(t, res.Clean(), "%v\nfaults:\n%s", res.Violations, res.faults)
}

// TestReadsAfterAnExpiredSessionsWriteGoOn replays the long mode's seed
// that found it (CURP-HO, N = 5, seed 1941 under power cuts, sessions
// expiring after 1.86 s): a session read another session's weak write on
// the fast path, both idled past the expiry, and the reader's next weak
// reads, naming that write (Request.ReadAfter), waited for ever at every
// replica: the session table, having forgotten the writer's session, no
// longer knew the write was applied. A replica whose applied state holds
// the read's speculative floor now knows it applied the write.
func TestReadsAfterAnExpiredSessionsWriteGoOn(t *testing.T) {
	res := checkedRun(t, "curp-ho", 5, 1941, mutation{faults: true, swarm: true, powerCuts: true})
	require.NoError(t, res.Err)
	require.True(t, res.Clean(), "%v\nfaults:\n%s", res.Violations, res.faults)
}
