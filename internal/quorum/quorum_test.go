package quorum

import "testing"

// TestSurvivorsHoldEveryFastPath checks the relation recovery rests on, by
// counting: of any F+1 replicas, at least Recorded hold each superquorum's
// records, and Recorded is more than half of F+1.
func TestSurvivorsHoldEveryFastPath(t *testing.T) {
	want := map[int][4]int{1: {0, 1, 1, 1}, 3: {1, 2, 3, 2}, 5: {2, 3, 4, 2}, 7: {3, 4, 6, 3}}
	for n, w := range want {
		if got := [4]int{F(n), Majority(n), Superquorum(n), Recorded(n)}; got != w {
			t.Errorf("n=%d: F, Majority, Superquorum, Recorded = %v, want %v", n, got, w)
		}
	}
	for n := 1; n <= 15; n += 2 {
		survivors := Majority(n)
		// The fewest records any survivor set can hold: all the replicas
		// outside the superquorum survive first.
		if least := survivors - (n - Superquorum(n)); least < Recorded(n) {
			t.Errorf("n=%d: %d survivors may hold only %d records, want %d", n, survivors, least, Recorded(n))
		}
		if 2*Recorded(n) <= survivors {
			t.Errorf("n=%d: %d records are not a majority of %d survivors", n, Recorded(n), survivors)
		}
	}
}
