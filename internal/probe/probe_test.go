package probe

import (
	"bufio"
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCycleVisitsEveryPosition: following the permutation from 0 comes back
// to 0 only after visiting every position, so the walk cannot settle in a
// short loop that fits in a cache.
func TestCycleVisitsEveryPosition(t *testing.T) {
	for _, n := range []int{2, 3, 17, 1000, 1 << 16} {
		next := cycle(n, rand.New(rand.NewPCG(uint64(n), 7)))
		seen := make([]bool, n)
		at := uint32(0)
		for i := range n {
			require.False(t, seen[at], "n=%d: position %d visited twice after %d steps", n, at, i)
			seen[at] = true
			at = next[at]
		}
		require.Zero(t, at, "n=%d: the walk did not return to its start after %d steps", n, n)
	}
}

// TestRunReportsItsWork: a short run writes a line per interval, each
// parsing back to a positive amount of both kinds of work, and a
// dependent load costs more than an arithmetic step.
func TestRunReportsItsWork(t *testing.T) {
	// Laying out the buffer takes a while under the race detector on a
	// busy machine: the run ends after its third line, not at a set time.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	w := &cancelAfterLines{w: &out, lines: 3, cancel: cancel}
	require.NoError(t, Run(ctx, Config{Interval: 100 * time.Millisecond, Words: 1 << 20}, w))
	text := out.String()
	var samples []Sample
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		s, err := Parse(sc.Text())
		require.NoError(t, err)
		require.Positive(t, s.Loads)
		require.Positive(t, s.LoadCPU)
		require.Positive(t, s.Steps)
		require.Positive(t, s.StepsCPU)
		if len(samples) > 0 {
			require.Greater(t, s.Seconds, samples[len(samples)-1].Seconds)
		}
		samples = append(samples, s)
	}
	require.GreaterOrEqual(t, len(samples), 3, "lines: %q", text)
	load, step := Speeds(samples)
	require.Greater(t, load, step, "a load that waits for the one before cannot be cheaper than a register step")
}

func TestParseRefusesMalformedLines(t *testing.T) {
	s := Sample{Seconds: 1.5, Loads: 20000, LoadCPU: 3 * time.Millisecond, Steps: 200000, StepsCPU: 400 * time.Microsecond}
	back, err := Parse(s.String())
	require.NoError(t, err)
	require.Equal(t, s, back)
	for _, bad := range []string{"", "probe", "probe 1 2 3 4", "probe x 1 2 3 4", "probe 1 1 -2 3 4", "other 1 1 2 3 4", "probe 1 1 2 3 4 5"} {
		_, err := Parse(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestSpeeds(t *testing.T) {
	load, step := Speeds([]Sample{
		{Loads: 100, LoadCPU: 10 * time.Microsecond, Steps: 1000, StepsCPU: 2 * time.Microsecond},
		{Loads: 300, LoadCPU: 50 * time.Microsecond},
	})
	require.InDelta(t, 150.0, load, 1e-9)
	require.InDelta(t, 2.0, step, 1e-9)
	load, step = Speeds(nil)
	require.Zero(t, load)
	require.Zero(t, step)
}

// cancelAfterLines passes writes on to w and cancels once it has seen
// lines newlines.
type cancelAfterLines struct {
	w      *bytes.Buffer
	lines  int
	cancel context.CancelFunc
}

func (c *cancelAfterLines) Write(b []byte) (int, error) {
	c.lines -= bytes.Count(b, []byte("\n"))
	if c.lines <= 0 {
		c.cancel()
	}
	return c.w.Write(b)
}
