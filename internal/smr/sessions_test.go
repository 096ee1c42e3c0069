package smr

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// bare is the least core a Replica can be driven by: it steps raft's
// messages and walks each round to its end, adding nothing. The replicas
// then only log the leader's clock entries and what a test proposes,
// which is all these tests need.
type bare struct{ *Replica }

func (b bare) Step(from wire.NodeID, m wire.Message) {
	if m, ok := m.(*wire.Raft); ok {
		b.StepRaft(from, m)
	}
}

func (b bare) Ready() protocol.Ready {
	b.Begin()
	for b.Next().Kind != Done {
	}
	return b.Output()
}

// testExpiry is the session expiry of compactingSim: 640 ticks of 10 ms,
// so the leader logs a clock entry every 10 ticks.
const testExpiry = 6400 * time.Millisecond

// compactingSim starts three bare replicas that expire sessions after
// testExpiry and compact their logs every few entries, and waits for a
// leader.
func compactingSim(t *testing.T) *sim.Sim {
	t.Helper()
	s, err := sim.New(sim.Config{
		Seed: 1, Replicas: 3, Network: sim.Network{OneWay: sim.UniformWAN(3, 5*time.Millisecond)},
		SessionExpiry: testExpiry,
		NewReplica: func(cfg coreconfig.Config) (protocol.Replica, error) {
			r, err := New(cfg, Options{CompactEvery: 10, CompactKeep: 2})
			if err != nil {
				return nil, err
			}
			return bare{r}, nil
		},
	})
	require.NoError(t, err)
	require.True(t, s.RunUntil(func() bool { return s.Leader() != 0 }, 5*time.Second), "no leader")
	return s
}

func replica(s *sim.Sim, id wire.NodeID) *Replica { return s.Replica(id).(bare).Replica }

// snapshotTicksScenario cuts a follower off with its clock at 2.5 times
// the rate for longer than the expiry over 1.5, while the leader's log is
// compacted, so that its ticks run more than the expiry ahead of the log's
// clock and it must catch up from a snapshot. It reports how the
// follower's ticks differ from the snapshot's clock once it installed the
// snapshot, or "" if they do not.
func snapshotTicksScenario(t *testing.T) string {
	s := compactingSim(t)
	leader := s.Leader()
	var f wire.NodeID
	for _, r := range s.Replicas() {
		if r != leader {
			f = r
		}
	}
	s.Partition([]wire.NodeID{f}, []wire.NodeID{leader, 6 - leader - f})
	s.SetTickRate(f, 2.5)
	s.RunFor(testExpiry)
	fr, lr := replica(s, f), replica(s, leader)
	require.Greater(t, lr.FirstIndex(), fr.AppliedIndex()+1, "the leader's log was not compacted past the follower")
	require.Greater(t, fr.ticks, lr.store.Clock()+lr.expireAfter, "the follower's ticks did not run ahead by the expiry")
	old := fr.store
	s.Heal()
	require.True(t, s.RunUntil(func() bool { return fr.store != old }, 5*time.Second), "no snapshot installed")
	require.Positive(t, fr.store.Clock(), "the snapshot holds no clock")
	// Nothing after the snapshot is applied yet: the ticks come from the
	// snapshot alone.
	if fr.ticks != fr.store.Clock() {
		return fmt.Sprintf("follower %d's ticks are %d after it installed a snapshot with clock %d (expiry %d)",
			f, fr.ticks, fr.store.Clock(), fr.expireAfter)
	}
	return ""
}

// TestSnapshotResetsFollowerTicks: a follower's ticks start again from the
// clock of a snapshot it installs from the leader, as from a clock entry
// it applies. Kept, a follower whose clock ran fast while it was cut off
// and that is elected before it applies a clock entry would jump the log's
// clock past the expiry of sessions active a moment before.
func TestSnapshotResetsFollowerTicks(t *testing.T) {
	require.Empty(t, snapshotTicksScenario(t))
}

// TestRestartStartsTicksFromTheSnapshot: a replica restarted from its
// disk, whose log was compacted, starts its ticks from the snapshot's
// clock, not from zero nor from what it counted before.
func TestRestartStartsTicksFromTheSnapshot(t *testing.T) {
	s := compactingSim(t)
	var f wire.NodeID
	for _, r := range s.Replicas() {
		if r != s.Leader() {
			f = r
		}
	}
	s.SetTickRate(f, 2.5)
	s.RunFor(3 * time.Second)
	before := replica(s, f)
	require.Greater(t, before.FirstIndex(), before.AppliedIndex()/2, "the follower's log was not compacted")
	s.Crash(f)
	require.NoError(t, s.Restart(f))
	fr := replica(s, f)
	require.Greater(t, fr.AppliedIndex(), uint64(0), "the restarted replica's state came from no snapshot")
	require.Positive(t, fr.store.Clock(), "the snapshot holds no clock")
	require.Equal(t, fr.store.Clock(), fr.ticks, "the restarted replica's ticks")
}
