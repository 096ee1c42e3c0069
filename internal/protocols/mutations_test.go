//go:build mutations

package protocols_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/curp"
)

// Run these with: go test -tags mutations -run Mutations ./internal/protocols/

// TestScenariosCatchMutations: each safety fix's scenario test fails when
// its bug is re-introduced.
func TestScenariosCatchMutations(t *testing.T) {
	cases := []struct {
		mutation string
		scenario func(t *testing.T) string
	}{
		{"any-term", func(t *testing.T) string { return deposedLeaderScenario(t, "curp") }},
		{"replay-unordered", replayOrderScenario},
	}
	for _, tc := range cases {
		t.Run(tc.mutation, func(t *testing.T) {
			require.NoError(t, curp.Break(tc.mutation))
			defer curp.Repair()
			got := tc.scenario(t)
			require.NotEmpty(t, got, "the scenario passed with %q", tc.mutation)
			t.Logf("caught: %s", got)
		})
	}
}

// TestFaultsCatchMutations re-introduces, one at a time, bugs the safety
// fixes removed, and expects the checked simulation under the nemesis to
// report each within its CI seeds (200 per protocol and size) — except
// unordered replays, which need a witness to have recorded a session's
// operations out of turn during a leader change: the random nemesis first
// reaches that at seed 1101 (N = 3), so that case runs 1,500 seeds
// (about 45 s). Its scenario test catches it at once
// (TestScenariosCatchMutations).
func TestFaultsCatchMutations(t *testing.T) {
	cases := []struct {
		mutation string
		protocol string
		volatile bool
		seeds    uint64
	}{
		{"log-in-recovery", "curp-ht", false, 200},
		{"trust-restarted", "curp", true, 200},
		{"any-term", "curp", false, 200},
		{"any-term", "curp-ht", false, 200},
		{"replay-unordered", "curp-ho", false, 1500},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s", tc.mutation, tc.protocol), func(t *testing.T) {
			require.NoError(t, curp.Break(tc.mutation))
			defer curp.Repair()
			start := time.Now()
			for seed := uint64(1); seed <= tc.seeds; seed++ {
				for _, n := range []int{3, 5} {
					res := checkedRun(t, tc.protocol, n, seed, mutation{faults: true, volatile: tc.volatile, stallOK: true})
					if res.stalled != "" {
						t.Logf("caught at seed %d (n=%d) after %v: the run stalled: %s", seed, n, time.Since(start).Round(time.Millisecond), res.stalled)
						return
					}
					if !res.Clean() {
						t.Logf("caught at seed %d (n=%d) after %v: %v", seed, n, time.Since(start).Round(time.Millisecond), res.Violations[0].Property)
						return
					}
				}
			}
			t.Fatalf("%d seeds of %s with %q checked clean", tc.seeds, tc.protocol, tc.mutation)
		})
	}
}
