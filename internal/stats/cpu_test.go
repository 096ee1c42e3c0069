package stats

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// burn spins until this process has used d more CPU time, or gives up
// after ten seconds on a machine too busy to schedule it.
func burn(d time.Duration) uint64 {
	x := uint64(1)
	target := SelfCPU() + d
	for deadline := time.Now().Add(10 * time.Second); SelfCPU() < target && time.Now().Before(deadline); {
		for range 100_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

func TestProcessCPUMatchesSelfCPU(t *testing.T) {
	burn(250 * time.Millisecond)
	self := SelfCPU()
	proc, err := ProcessCPU(os.Getpid())
	require.NoError(t, err)
	require.Positive(t, proc)
	require.GreaterOrEqual(t, self, 200*time.Millisecond)
	// /proc counts in 10 ms ticks and both include the other goroutines
	// still running, so allow a few ticks and a little drift.
	require.InDelta(t, self.Seconds(), proc.Seconds(), 0.05+0.1*self.Seconds())
}

func TestProcessCPUErrors(t *testing.T) {
	_, err := ProcessCPU(-1)
	require.Error(t, err)
}

func TestParseStatTicks(t *testing.T) {
	tests := []struct {
		name  string
		stat  string
		ticks uint64
		ok    bool
	}{
		{"plain", "42 (replica) S 1 42 42 0 -1 4194304 100 0 0 0 250 37 0 0 20 0 8 0 100 0 0", 287, true},
		{"command with spaces and parens", "42 (a) b) c) R 1 42 42 0 -1 4194304 100 0 0 0 7 3 0 0 20 0", 10, true},
		{"truncated", "42 (x) S 1 2 3", 0, false},
		{"no command", "42 x S", 0, false},
		{"not a number", "42 (x) S 1 42 42 0 -1 4194304 100 0 0 0 abc 3 0 0", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatTicks([]byte(tt.stat))
			if !tt.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.ticks, got)
		})
	}
}

// TestChildrenCPU runs this test binary again as a child that burns CPU.
func TestChildrenCPU(t *testing.T) {
	if os.Getenv("STATS_BURN_CHILD") == "1" {
		burn(150 * time.Millisecond)
		return
	}
	before := ChildrenCPU()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildrenCPU$")
	cmd.Env = append(os.Environ(), "STATS_BURN_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.GreaterOrEqual(t, ChildrenCPU()-before, 50*time.Millisecond)
}
