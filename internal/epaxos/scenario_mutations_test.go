//go:build mutations

package epaxos_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/epaxos"
	"github.com/hybridkv/hybridkv/internal/scenario"
)

// TestScenarioFilesCatchMutations: each scenario file written for a
// published bug class names it in a "# mutation: NAME" line; the file
// passes as it is and fails, by the checker's verdict, with that bug put
// back.
func TestScenarioFilesCatchMutations(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	require.NoError(t, err)
	found := 0
	for _, file := range files {
		mutation := mutationOf(t, file)
		if mutation == "" {
			continue
		}
		found++
		t.Run(mutation, func(t *testing.T) {
			require.Empty(t, scenario.Mismatches(t, file), "%s fails without the mutation", file)
			require.NoError(t, epaxos.Break(mutation))
			defer epaxos.Repair()
			found := scenario.Findings(t, file)
			require.NotEmpty(t, found, "%s: the checker found nothing with %q", file, mutation)
			t.Logf("%s caught: %s", file, found[0])
		})
	}
	require.Positive(t, found, "no scenario file names a mutation")
}

// mutationOf returns the mutation a scenario file's comments name.
func mutationOf(t *testing.T, file string) string {
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	for line := range strings.Lines(string(data)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "# mutation: "); ok {
			return name
		}
	}
	return ""
}
