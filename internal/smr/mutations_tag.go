//go:build mutations

package smr

import "fmt"

// Mutations names the bugs Break can re-introduce.
var Mutations = []string{"snapshot-keeps-ticks"}

// Break re-introduces the named bug until Repair; for mutation tests.
func Break(name string) error {
	switch name {
	case "snapshot-keeps-ticks":
		broken.snapshotKeepsTicks = true
	default:
		return fmt.Errorf("smr: no mutation %q", name)
	}
	return nil
}

// Repair undoes every Break.
func Repair() { broken = mutationFlags{} }
