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

// TestFindingsReportsOnlyVerdicts: a check that finds the history clean is
// no finding, whatever else its output holds; one that finds a violation
// is.
func TestFindingsReportsOnlyVerdicts(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.txt")
	script := "cluster protocol=raft replicas=3\n----\nwrong\n\nclient a at=L\n----\nwrong\n\n" +
		"put a 1 7 x strong\n----\nwrong\n\nrun\n----\nwrong\n\ncheck\n----\nwrong\n"
	require.NoError(t, os.WriteFile(clean, []byte(script), 0o644))
	require.Empty(t, Findings(t, clean))
	require.NotEmpty(t, Mismatches(t, clean))
}
