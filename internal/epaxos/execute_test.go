package epaxos

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

func measure(t *testing.T, m protocol.Metrics, name string) float64 {
	t.Helper()
	v, ok := m.Measure(name)
	require.True(t, ok, "no metric %s", name)
	return v
}

// TestExecutionWaitIsCounted: a committed instance that depends on one
// not committed here yet executes only once that one commits; the ticks
// in between are what the execution-wait metrics sum, apart for the
// instances holding a strong operation.
func TestExecutionWaitIsCounted(t *testing.T) {
	r := startOn(t, raftlog.NewMemDisk(), true)
	round(t, r)
	for range 3 {
		r.Tick()
		round(t, r)
	}
	weak := put(8, 1, "k")
	weak.Ops[0].Level = wire.Weak
	r.Step(3, &wire.EPaxos{Kind: wire.ECommit, Instance: in(3, 1), Command: put(9, 1, "k"), Deps: []wire.Instance{in(2, 1)}})
	round(t, r)
	for range 7 {
		r.Tick()
		round(t, r)
	}
	r.Step(2, &wire.EPaxos{Kind: wire.ECommit, Instance: in(2, 1), Command: weak})
	round(t, r)

	m := r.Metrics()
	require.Equal(t, 2.0, measure(t, m, "epaxos_executed_instances_total"))
	require.Equal(t, 7.0, measure(t, m, "epaxos_commit_to_execute_ticks_total"), "3.1 waited 7 ticks, 2.1 none")
	require.Equal(t, 1.0, measure(t, m, "epaxos_strong_executed_instances_total"))
	require.Equal(t, 7.0, measure(t, m, "epaxos_strong_commit_to_execute_ticks_total"))
}
