package epaxos_test

import (
	"testing"

	"github.com/hybridkv/hybridkv/internal/scenario"
)

// TestScenarios runs the scenario files in testdata/scenarios (see package
// scenario; -rewrite rewrites their expected output).
func TestScenarios(t *testing.T) { scenario.Run(t, "testdata/scenarios") }
