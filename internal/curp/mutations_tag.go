//go:build mutations

package curp

import (
	"fmt"

	"github.com/hybridkv/hybridkv/internal/curpclient"
)

// Mutations names the bugs Break can re-introduce.
var Mutations = []string{"any-term", "log-in-recovery", "replay-unordered", "trust-restarted", "drop-replaced-records", "replies-before-write", "names-before-durable", "vote-ties", "pool-ignores-txns", "speculate-txns"}

// Break re-introduces the named bug until Repair; for mutation tests.
func Break(name string) error {
	switch name {
	case "any-term":
		// The client's bug: its core is a package of its own.
		curpclient.BreakAnyTerm()
	case "log-in-recovery":
		broken.logInRecovery = true
	case "replay-unordered":
		broken.replayUnordered = true
	case "trust-restarted":
		broken.trustRestarted = true
	case "drop-replaced-records":
		broken.dropReplacedRecords = true
	case "replies-before-write":
		broken.repliesBeforeWrite = true
	case "names-before-durable":
		broken.namesBeforeDurable = true
	case "vote-ties":
		broken.voteTies = true
	case "pool-ignores-txns":
		broken.poolIgnoresTxns = true
	case "speculate-txns":
		broken.speculateTxns = true
	default:
		return fmt.Errorf("curp: no mutation %q", name)
	}
	return nil
}

// Repair undoes every Break.
func Repair() {
	broken = mutationFlags{}
	curpclient.Repair()
}
