package smr

// broken re-introduces, for mutation tests, bugs the replicated state
// machine once had, so the checked simulation can show that it catches
// each of them. Only a build with the mutations tag can set it (see
// Break); in every other build it stays false.
var broken mutationFlags

type mutationFlags struct {
	// snapshotKeepsTicks: installing a snapshot replaces the store, and
	// with it the log's clock, but leaves the replica's ticks as they were
	// (see followClock).
	snapshotKeepsTicks bool
}
