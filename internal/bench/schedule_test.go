package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/stats"
)

func TestParseNemesis(t *testing.T) {
	n, err := ParseNemesis("kill, pause,kill", 4)
	require.NoError(t, err)
	require.Equal(t, &Nemesis{Kinds: []string{"kill", "pause"}, Seed: 4}, n)
	_, err = ParseNemesis("kill,meteor", 1)
	require.ErrorContains(t, err, `"meteor"`)
	n, err = ParseNemesis("", 1)
	require.NoError(t, err)
	require.Nil(t, n)
}

// A schedule is a function of its seed, uses every listed kind when there
// is room, never takes more than f replicas down (restart-all aside), runs
// one fault at a time, and heals the last one with time to spare.
func TestScheduleBounds(t *testing.T) {
	for _, replicas := range []int{3, 5, 7} {
		f := (replicas - 1) / 2
		for seed := range uint64(50) {
			n := &Nemesis{Kinds: NemesisKinds, Seed: seed}
			const total = 40 * time.Second
			steps := n.schedule(total, replicas, f)
			require.Equal(t, steps, n.schedule(total, replicas, f), "same seed, same schedule")
			kinds := map[string]bool{}
			end := time.Duration(0)
			for _, s := range steps {
				kinds[s.kind] = true
				if end > 0 {
					require.GreaterOrEqual(t, s.at, end+minHealGap, "faults overlap or follow too closely: %v", &s)
				}
				end = s.at + s.length
				if s.kind != "restart-all" {
					require.LessOrEqual(t, s.down(replicas), f, "%v", &s)
				}
				if s.variant == "split" {
					require.GreaterOrEqual(t, s.minority, 1)
				}
			}
			last := steps[len(steps)-1]
			if last.kind == "kill" || last.kind == "restart-all" {
				end += restartRoom // its restart takes seconds of its own
			}
			require.LessOrEqual(t, end+settle, total)
			require.Len(t, kinds, len(NemesisKinds), "seed %d: %v", seed, kinds)
		}
	}
	a := (&Nemesis{Kinds: NemesisKinds, Seed: 1}).schedule(time.Minute, 3, 1)
	b := (&Nemesis{Kinds: NemesisKinds, Seed: 2}).schedule(time.Minute, 3, 1)
	require.NotEqual(t, a, b, "the seed matters")
	only := (&Nemesis{Kinds: []string{"pause"}, Seed: 1}).schedule(time.Minute, 3, 1)
	require.NotEmpty(t, only)
	require.True(t, !slices.ContainsFunc(only, func(s faultStep) bool { return s.kind != "pause" }))
}

func TestPickN(t *testing.T) {
	for pick := range uint64(100) {
		got := pickN([]uint64{1, 2, 3, 4}, 2, pick)
		require.Len(t, got, 2)
		require.NotEqual(t, got[0], got[1])
	}
	require.Empty(t, pickN([]uint64{1, 2}, 0, 7))
}

// Unavailability is measured per site from the injection to the first
// strong operation invoked after it; earlier operations, weak ones and
// other sites do not count; failures go to the fault in force when they
// were invoked.
func TestFaultLogMeasures(t *testing.T) {
	start := time.Now()
	l := newFaultLog(start, nil)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	l.completed("a", stats.StrongWrite, at(0), at(50), false) // before any fault
	i := l.inject("kill", "SIGKILL leader replica 1", at(1000), []string{"a", "b"})
	l.completed("a", stats.StrongWrite, at(900), at(1100), true)  // invoked before the fault
	l.completed("a", stats.WeakRead, at(1010), at(1020), true)    // weak
	l.completed("a", stats.StrongRead, at(1200), at(1700), false) // failed
	l.completed("a", stats.StrongRead, at(1300), at(1800), true)
	l.completed("a", stats.StrongRead, at(1400), at(1900), true) // later: ignored
	l.healed(i, at(2000))
	j := l.inject("pause", "SIGSTOP follower replica 2", at(3000), []string{"a", "b"})
	// Site b recovers from both faults with one operation.
	l.completed("b", stats.StrongWrite, at(3100), at(3300), true)
	l.healed(j, at(4000))

	rep := &stats.Report{}
	l.fill(rep, []string{"a", "b"})
	require.Len(t, rep.Faults, 2)
	require.Equal(t, map[string]float64{"a": 800, "b": 2300}, rep.Faults[0].UnavailableMs)
	require.Equal(t, map[string]float64{"b": 300}, rep.Faults[1].UnavailableMs, "site a never recovered from the pause")
	require.Equal(t, int64(1), rep.Faults[0].Failed)
	require.InDelta(t, 2.0, rep.Faults[0].HealedS, 1e-9)
	require.Contains(t, rep.Notes, "1 operations failed before the first fault")
	require.Equal(t, int64(1), rep.Timeline.Ops["weak-read"][10])
	require.Equal(t, int64(2), rep.Timeline.Ops["strong-read"][18]+rep.Timeline.Ops["strong-read"][19])
}
