package bench_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
)

// TestLeaderCrashWaitsForALeader: a crash of the leader due before any
// replica names one (just after the cluster starts), or just after the
// leader died (the replicas left still name it until their election
// timeout), waits for a leader and kills it. It used to kill nothing and
// report that no running replica was the leader: the first case failed a
// run on a machine whose disk stalled for 0.9 s.
func TestLeaderCrashWaitsForALeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	cfg := config.Default()
	cfg.Protocol = config.ProtocolRaft
	ctx, ps, _ := spawnLocal(t, &cfg)
	proto, err := protocols.Lookup(cfg.Protocol)
	require.NoError(t, err)

	first, err := bench.CrashVictims(ctx, proto, ps, "leader")
	require.NoError(t, err)
	require.Len(t, first, 1)
	ps.Proc(first[0]).Kill()

	start := time.Now()
	next, err := bench.CrashVictims(ctx, proto, ps, "leader")
	require.NoError(t, err, "no leader after %v", time.Since(start))
	require.Len(t, next, 1)
	require.NotEqual(t, first[0], next[0])
	require.True(t, ps.Proc(next[0]).Running())
	st, err := ps.Proc(next[0]).Status(ctx)
	require.NoError(t, err)
	require.EqualValues(t, next[0], st.Leader, "the replica picked does not lead")
}
