package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/config"
)

// TestDebugAddrAvoidsReplicaPorts: a replica's debug address is never a
// port a replica is configured to listen on (one that is down leaves it
// free), nor another replica's debug address, and a restarted replica
// keeps its own. A nemesis run once sent fault rules to a replica's
// transport after a restart of every replica had handed its port out as a
// debug address.
func TestDebugAddrAvoidsReplicaPorts(t *testing.T) {
	cfg := config.Default()
	cfg.Replicas[0].Addr, cfg.Replicas[1].Addr, cfg.Replicas[2].Addr = "127.0.0.1:20001", "127.0.0.1:20002", "127.0.0.1:20003"
	picks := []string{"127.0.0.1:20002", "127.0.0.1:20100", "127.0.0.1:20003", "127.0.0.1:20100", "127.0.0.1:20200"}
	orig := pickDebugPort
	t.Cleanup(func() { pickDebugPort = orig })
	pickDebugPort = func() (string, error) {
		addr := picks[0]
		picks = picks[1:]
		return addr, nil
	}
	ps := &Processes{cfg: &cfg}
	addr, err := ps.debugAddr(1)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:20100", addr, "replica 2's port was handed out")
	ps.procs = append(ps.procs, &Process{ID: 1, DebugAddr: addr})
	addr, err = ps.debugAddr(2)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:20200", addr, "replica 3's port or replica 1's debug address was handed out")
	ps.procs = append(ps.procs, &Process{ID: 2, DebugAddr: addr})
	addr, err = ps.debugAddr(1)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:20100", addr, "a restarted replica keeps its debug address")
}
