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
// published bug class names it in a "# mutation: NAME" line (a file may
// name several); the file passes as it is and fails, by the checker's
// verdict, with each bug it names put back.
func TestScenarioFilesCatchMutations(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	require.NoError(t, err)
	found := 0
	for _, file := range files {
		for _, mutation := range mutationsOf(t, file) {
			found++
			t.Run(mutation+"/"+filepath.Base(file), func(t *testing.T) {
				require.Empty(t, scenario.Mismatches(t, file), "%s fails without the mutation", file)
				require.NoError(t, epaxos.Break(mutation))
				defer epaxos.Repair()
				findings := scenario.Findings(t, file)
				require.NotEmpty(t, findings, "%s: the checker found nothing with %q", file, mutation)
				t.Logf("%s caught: %s", file, findings[0])
			})
		}
	}
	require.Positive(t, found, "no scenario file names a mutation")
}

// mutationsOf returns the mutations a scenario file's comments name.
func mutationsOf(t *testing.T, file string) []string {
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var names []string
	for line := range strings.Lines(string(data)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "# mutation: "); ok {
			names = append(names, name)
		}
	}
	return names
}
