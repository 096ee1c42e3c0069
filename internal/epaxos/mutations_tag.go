//go:build mutations

package epaxos

import "fmt"

// Mutations names the bugs Break can re-introduce.
var Mutations = []string{"one-ballot", "recovery-ignores-agreement", "recovery-takes-any-preaccept",
	"always-agreed", "promise-not-kept", "reply-at-commit", "execute-uncommitted",
	"read-ignores-after", "thrifty-fast-quorum", "no-fragments", "no-overwrites"}

// Break re-introduces the named bug until Repair; for mutation tests.
func Break(name string) error {
	switch name {
	case "one-ballot":
		broken.oneBallot = true
	case "recovery-ignores-agreement":
		broken.recoveryIgnoresAgreement = true
	case "recovery-takes-any-preaccept":
		broken.recoveryTakesAnyPreAccept = true
	case "always-agreed":
		broken.alwaysAgreed = true
	case "promise-not-kept":
		broken.promiseNotKept = true
	case "reply-at-commit":
		broken.replyAtCommit = true
	case "execute-uncommitted":
		broken.executeUncommitted = true
	case "read-ignores-after":
		broken.readIgnoresAfter = true
	case "no-fragments":
		broken.noFragments = true
	case "no-overwrites":
		broken.noOverwrites = true
	case "thrifty-fast-quorum":
		broken.thriftyFastQuorum = true
	default:
		return fmt.Errorf("epaxos: no mutation %q", name)
	}
	return nil
}

// Repair undoes every Break.
func Repair() { broken = mutationFlags{} }
