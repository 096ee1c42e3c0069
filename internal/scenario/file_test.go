package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMismatchesAgreesWithTheFiles: every scenario file passes under
// Mismatches as under datadriven's runner, and a changed expectation is
// reported.
func TestMismatchesAgreesWithTheFiles(t *testing.T) {
	files, err := filepath.Glob("../*/testdata/scenarios/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		require.Empty(t, Mismatches(t, f), f)
	}
	wrong := filepath.Join(t.TempDir(), "wrong.txt")
	require.NoError(t, os.WriteFile(wrong, []byte("# a comment\n\ncluster protocol=raft\n----\nwrong\n"), 0o644))
	diffs := Mismatches(t, wrong)
	require.Len(t, diffs, 1)
	require.Contains(t, diffs[0], "line 3: cluster protocol=raft")
}
