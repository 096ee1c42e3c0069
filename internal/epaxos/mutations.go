package epaxos

// broken re-introduces, for mutation tests, the bug classes published
// against EPaxos and its implementations, so the checked simulation can
// show that it catches each of them. Only a build with the mutations tag
// can set it (see Break); in every other build it stays false.
var broken mutationFlags

type mutationFlags struct {
	// oneBallot: a prepare overwrites the accepted ballot with the
	// promised one (one ballot variable per instance; Sutra, IPL 2020).
	oneBallot bool
	// recoveryIgnoresAgreement: recovery passes over the replicas that
	// agreed with the command leader at ballot 0 and pre-accepts the
	// command again, so a command committed on the fast path (executed,
	// answered, its commit not yet sent) gets other dependencies.
	recoveryIgnoresAgreement bool
	// recoveryTakesAnyPreAccept: recovery takes the dependencies of any
	// one replica that pre-accepted at ballot 0, agreed or not, losing
	// those the others added.
	recoveryTakesAnyPreAccept bool
	// alwaysAgreed: a replica reports agreement with the command leader's
	// dependencies whatever it added (the conflict status never set).
	alwaysAgreed bool
	// promiseNotKept: the records keep the accepted ballot where the
	// promised one belongs, so a restart forgets promises.
	promiseNotKept bool
	// replyAtCommit: the command leader answers a write once it commits,
	// before it executes (an ordering that ignores real time inside a
	// strongly connected component then shows).
	replyAtCommit bool
	// executeUncommitted: execution does not wait for uncommitted
	// dependencies.
	executeUncommitted bool
	// readIgnoresAfter (EPaxos-HO): a weak read is answered at once,
	// whatever its session saw elsewhere.
	readIgnoresAfter bool
	// thriftyFastQuorum: the optimised fast quorum, F + ⌊(F+1)/2⌋ (3 of
	// 5), without the TryPreAccept phase its recovery needs.
	thriftyFastQuorum bool
	// noFragments (EPaxos-HO): recovery proposes a no-op in an instance
	// no replica holds the command of, whatever clients said it held.
	noFragments bool
	// noOverwrites (EPaxos-HO): a command names none of its session's
	// earlier weak writes it overwrites, and a replica that sees its
	// instance of an acknowledged weak write replaced by a no-op waits
	// for the client to send it again; a copy of a lost write can then
	// take effect after a later write of its session.
	noOverwrites bool
}
