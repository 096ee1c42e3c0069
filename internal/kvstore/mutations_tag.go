//go:build mutations

package kvstore

import "fmt"

// Mutations names the bugs Break can re-introduce.
var Mutations = []string{"scan-skips-key"}

// Break re-introduces the named bug until Repair; for mutation tests.
func Break(name string) error {
	switch name {
	case "scan-skips-key":
		broken.scanSkipsKey = true
	default:
		return fmt.Errorf("kvstore: no mutation %q", name)
	}
	return nil
}

// Repair undoes every Break.
func Repair() { broken = mutationFlags{} }
