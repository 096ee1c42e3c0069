// Package quorum holds the quorum sizes of n replicas, one definition for
// the replicas, the clients and the configuration.
package quorum

// F is how many of n = 2F+1 replicas may fail.
func F(n int) int { return (n - 1) / 2 }

// Majority is the replication quorum, F+1.
func Majority(n int) int { return F(n) + 1 }

// Superquorum is CURP's fast-path quorum, F + ⌈F/2⌉ + 1: 3 of 3, 4 of 5.
// Any F+1 survivors then include at least Recorded(n) witnesses of every
// fast-path operation, more than half of them, which is how recovery finds
// each such operation and never two conflicting ones.
func Superquorum(n int) int {
	f := F(n)
	return f + (f+1)/2 + 1
}

// Recorded is ⌈F/2⌉+1: how many of any F+1 witnesses, all complete, hold
// the record of an operation that completed on the fast path.
func Recorded(n int) int { return (F(n)+1)/2 + 1 }
