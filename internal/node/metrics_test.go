package node_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/node"
)

// TestReplicaMetricsComeFromTheLoop: the loop answers metric requests, many
// at once, while it drives the core; before Run a request waits for the
// caller's deadline, and after Run it fails at once.
func TestReplicaMetricsComeFromTheLoop(t *testing.T) {
	core := &fakeCore{}
	r := newFakeReplica(t, core, 0)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := r.Metrics(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "nothing answers before Run")

	stop := run(t, r)
	require.Eventually(t, func() bool { return core.tickCount() >= 3 }, 2*time.Second, time.Millisecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				m, err := r.Metrics(context.Background())
				require.NoError(t, err)
				require.Equal(t, replicaID, m.ID)
				require.GreaterOrEqual(t, m.Term, uint64(3), "metrics are the core's, as of now")
			}
		})
	}
	wg.Wait()
	require.NoError(t, stop())

	_, err = r.Metrics(context.Background())
	require.ErrorIs(t, err, node.ErrNotRunning)
}
