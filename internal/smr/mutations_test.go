//go:build mutations

package smr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Run these with: go test -tags mutations -run Mutations ./internal/smr/

// TestSnapshotTicksCatchesMutation: the snapshot scenario fails when
// installing a snapshot leaves the replica's ticks as they were.
func TestSnapshotTicksCatchesMutation(t *testing.T) {
	require.NoError(t, Break("snapshot-keeps-ticks"))
	defer Repair()
	got := snapshotTicksScenario(t)
	require.NotEmpty(t, got, "the scenario passed with snapshot-keeps-ticks")
	t.Logf("caught: %s", got)
}
