package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
)

// TestIdleSessionsExpireRealProcesses runs CURP-HO as three replica
// processes with a 3 s session expiry. A session writes strongly and
// weakly and goes idle: every replica forgets it. Every replica is then
// SIGKILLed and restarted from its data directory and still holds no
// session. The session carries on (its weak write, committed, must not
// hold its next operations back) and is in every replica's table again.
func TestIdleSessionsExpireRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	cfg := config.Default()
	cfg.Protocol = config.ProtocolCURPHO
	cfg.Client.RetryMs, cfg.Client.TimeoutMs = 100, 300
	cfg.Raft.SessionExpiryS = 3
	ctx, ps, cc := spawnLocal(t, &cfg)
	// The replicas' configuration keeps the client timeout to a tenth of
	// the expiry; this client waits longer, for an election after the
	// restart, and its operations are done long before the expiry.
	cc.Timeout = 5 * time.Second
	c, err := client.New(cc)
	require.NoError(t, err)
	defer c.Close()
	s := c.NewSession()
	require.NoError(t, s.Put(ctx, "1", []byte("strong"), client.Strong))
	require.NoError(t, s.Put(ctx, "2", []byte("weak"), client.Weak))

	tables := func() []float64 {
		var n []float64
		for _, p := range ps.List() {
			n = append(n, metric(ctx, t, p.DebugAddr, "hybridkv_session_table_sessions"))
		}
		return n
	}
	require.Eventually(t, func() bool { return equal(tables(), 1) }, 5*time.Second, 100*time.Millisecond)
	require.Eventually(t, func() bool { return equal(tables(), 0) }, 10*time.Second, 100*time.Millisecond,
		"the idle session was not forgotten: %v", tables())
	for _, p := range ps.List() {
		require.Equal(t, 1.0, metric(ctx, t, p.DebugAddr, "hybridkv_session_table_expired_total"))
	}

	var ids []uint64
	for _, p := range ps.List() {
		p.Kill()
		ids = append(ids, p.ID)
	}
	require.NoError(t, ps.RestartAll(ctx, ids))
	require.Eventually(t, func() bool { return equal(tables(), 0) }, 10*time.Second, 100*time.Millisecond,
		"a restarted replica holds the forgotten session: %v", tables())

	opCtx, opCancel := context.WithTimeout(ctx, 10*time.Second)
	defer opCancel()
	require.NoError(t, s.Put(opCtx, "1", []byte("again"), client.Strong), "the session's next operation did not go through")
	v, _, err := s.Get(opCtx, "1", client.Strong)
	require.NoError(t, err)
	require.Equal(t, "again", string(v))
	require.Eventually(t, func() bool { return equal(tables(), 1) }, 5*time.Second, 100*time.Millisecond,
		"the session is not in every table again: %v", tables())
}

func equal(xs []float64, v float64) bool {
	for _, x := range xs {
		if x != v {
			return false
		}
	}
	return len(xs) > 0
}

// metric reads one unlabelled series from a replica's metrics (-1 when
// the replica does not answer).
func metric(ctx context.Context, t *testing.T, debugAddr, name string) float64 {
	m, err := bench.ScrapeMetrics(ctx, debugAddr)
	if err != nil {
		return -1
	}
	v, ok := m[name]
	require.True(t, ok, "no %s in replica metrics", name)
	return v
}
