package curp_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/curp"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestSimDeterministic: one seed, one run.
func TestSimDeterministic(t *testing.T) {
	run := func() (sim.Stats, time.Duration, map[clientcore.Path]int) {
		s := newSim(t, 42, 3, sim.Network{OneWay: sim.UniformWAN(3, 5*time.Millisecond), Jitter: 3 * time.Millisecond, Drop: 0.02})
		res, err := s.RunWorkload(sim.Workload{ClientSites: sim.Sites(3), Sessions: 2, Ops: 200, Pipeline: 3, Keys: 20, WriteRatio: 0.5}, time.Minute)
		require.NoError(t, err)
		return s.Stats, s.Now(), res.Paths
	}
	s1, t1, p1 := run()
	s2, t2, p2 := run()
	require.Equal(t, s1, s2)
	require.Equal(t, t1, t2)
	require.Equal(t, p1, p2)
}

// TestRetryAppliedOnce re-sends an already applied write after another
// session overwrote the key: a second application would bring the old value
// back.
func TestRetryAppliedOnce(t *testing.T) {
	s := newSim(t, 7, 3, sim.Network{OneWay: sim.UniformWAN(3, time.Millisecond)})
	require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 5*time.Second))
	c := s.AddClient(0)
	done := map[wire.OpID]clientcore.Completion{}
	s.OnComplete = func(_ wire.NodeID, c clientcore.Completion) { done[c.ID] = c }

	first := s.Submit(c, 1, wire.Op{Kind: wire.Put, Key: "9", Value: []byte("first")})
	require.True(t, s.RunUntil(func() bool { _, ok := done[first]; return ok }, time.Second))
	second := s.Submit(c, 2, wire.Op{Kind: wire.Put, Key: "9", Value: []byte("second")})
	require.True(t, s.RunUntil(func() bool { _, ok := done[second]; return ok }, time.Second))
	ok, _ := s.Converged(time.Second)
	require.True(t, ok)

	// The retry: the same identity, straight to every replica.
	retry := &wire.Request{Op: wire.Op{ID: first, Kind: wire.Put, Key: "9", Value: []byte("first")}, Flags: wire.FlagRetry}
	for _, r := range s.Replicas() {
		s.Inject(c, r, retry)
	}
	s.RunFor(time.Second)
	for _, r := range s.Replicas() {
		v, found := s.Replica(r).(interface{ Read(string) ([]byte, bool) }).Read("9")
		require.True(t, found)
		require.Equal(t, "second", string(v), "replica %d applied the retry again", r)
	}
}

// TestLeaderCrashKeepsFastPathWrites crashes the leader right after clients
// completed writes on the fast path and checks every acknowledged write
// survives. With isolate, the leader's log never reached the followers: only
// the witnesses' records and the new leader's replay can save the writes.
func TestLeaderCrashKeepsFastPathWrites(t *testing.T) {
	for _, isolate := range []bool{false, true} {
		for _, n := range []int{3, 5} {
			for seed := uint64(1); seed <= 5; seed++ {
				t.Run(fmt.Sprintf("isolate=%v/n=%d/seed=%d", isolate, n, seed), func(t *testing.T) {
					s := newSim(t, seed, n, sim.Network{OneWay: sim.UniformWAN(n, 10*time.Millisecond), Jitter: 2 * time.Millisecond})
					require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 5*time.Second))
					leader := s.Leader()
					// Let the leader finish its recovery before cutting it off.
					warm := s.AddClient(0)
					warmed := false
					s.OnComplete = func(wire.NodeID, clientcore.Completion) { warmed = true }
					s.Submit(warm, 100, wire.Op{Kind: wire.Put, Key: "100"})
					require.True(t, s.RunUntil(func() bool { return warmed }, 5*time.Second), "seed %d: leader not serving", seed)
					var others []wire.NodeID
					for _, r := range s.Replicas() {
						if r != leader {
							others = append(others, r)
						}
					}
					if isolate {
						s.Partition([]wire.NodeID{leader}, others)
					}
					acked := map[string]string{}
					c := s.AddClient(0)
					var ids []wire.OpID
					for k := uint64(0); k < 20; k++ {
						v := fmt.Sprintf("v%d", k)
						key := strconv.FormatUint(k, 10)
						ids = append(ids, s.Submit(c, k+1, wire.Op{Kind: wire.Put, Key: key, Value: []byte(v)}))
						acked[key] = v
					}
					completed := map[wire.OpID]clientcore.Path{}
					s.OnComplete = func(_ wire.NodeID, c clientcore.Completion) { completed[c.ID] = c.Path }
					// Crash the leader as soon as all are acknowledged: commit
					// has not reached the followers yet.
					require.True(t, s.RunUntil(func() bool { return len(completed) == len(ids) }, time.Second),
						"seed %d", seed)
					for _, p := range completed {
						if isolate {
							require.Equal(t, clientcore.PathFast, p, "seed %d", seed)
						}
					}
					s.Crash(leader)
					s.Heal()
					require.True(t, s.RunUntil(func() bool { l := s.Leader(); return l != 0 && l != leader }, 10*time.Second),
						"seed %d: no new leader", seed)
					allKept := func() bool {
						for k, v := range acked {
							for _, r := range s.Replicas() {
								if !s.Up(r) {
									continue
								}
								got, found := s.Replica(r).(interface{ Read(string) ([]byte, bool) }).Read(k)
								if !found || string(got) != v {
									return false
								}
							}
						}
						return true
					}
					require.True(t, s.RunUntil(allKept, 10*time.Second), "seed %d: an acknowledged write was lost", seed)
					require.NoError(t, s.Restart(leader))
					ok, sts := s.Converged(10 * time.Second)
					require.True(t, ok, "seed %d: restarted replica did not catch up: %+v", seed, sts)
				})
			}
		}
	}
}

// TestWitnessesRecordNothingStrongWithoutALeader: strong operations sent
// while no replica leads are answered once a leader is elected, and until
// then no witness pools them (they cannot have completed on the fast path,
// and a new leader's recovery would have to order them all).
func TestWitnessesRecordNothingStrongWithoutALeader(t *testing.T) {
	s := newSim(t, 1, 3, sim.Network{OneWay: sim.UniformWAN(3, 10*time.Millisecond)})
	require.Zero(t, s.Leader())
	c := s.AddClient(0)
	var ids []wire.OpID
	for k := range uint64(10) {
		ids = append(ids, s.Submit(c, k+1, wire.Op{Kind: wire.Put, Key: strconv.FormatUint(k, 10), Value: []byte("v")}))
	}
	completed := 0
	s.OnComplete = func(wire.NodeID, clientcore.Completion) { completed++ }
	pooled := func() int {
		n := 0
		for _, id := range s.Replicas() {
			n += measure(s.Replica(id), curp.MetricWitnessRecords)
		}
		return n
	}
	for s.Leader() == 0 {
		require.Zero(t, pooled(), "a witness pooled a strong operation with no leader, at %v", s.Now())
		require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 20*time.Millisecond) || s.Now() < 5*time.Second)
	}
	require.True(t, s.RunUntil(func() bool { return completed == len(ids) }, 5*time.Second), "the writes did not complete once a leader was elected")
}
