package kvstore

// broken re-introduces, for mutation tests, bugs a store could have, so the
// checked simulation can show that it catches each of them. Only a build
// with the mutations tag can set it (see Break); in every other build it
// stays false.
var broken mutationFlags

type mutationFlags struct {
	// scanSkipsKey: a scan answered from the applied state (a weak path's,
	// Scan) leaves out the first key it found when it found two or more,
	// as a walk that steps past its start would.
	scanSkipsKey bool
}
