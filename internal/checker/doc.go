// Package checker verifies a recorded history (package history) against
// the guarantees of the specification: S1 (linearizability of strong ops
// and weak writes), W1–W6 (session guarantees, causal visibility, no
// thin-air values), C1–C3 (how weak and strong ops of one session
// interact, and when weak writes become visible), E1 (replicas converge)
// and X1 (exactly once).
//
// # Orders
//
// Session order a → b holds when a and b share a session and a returned
// before b was invoked; ops of one session in flight together are
// concurrent. Reads-from w → r holds when r returned w's value; the
// checker relies on every put on a key writing a distinct value (benchmark
// values embed the writer's identity) and refuses a history where two do.
// Causal order is the transitive closure of both plus real-time order
// among strong ops. A write's place in the log is its Slot when the
// protocol reported one.
//
// A delete is a write of "absent": a read that found nothing read the
// initial state or one of its key's deletes, and which one is not known.
// Such a read is stale only if each of them (each delete invoked before it
// returned) is older than a write in its past; it takes no delete's past
// into its own, which can hide a violation later in its session, never
// invent one.
//
// # How each guarantee is checked
//
// W1–W5, C1, C2 come from one sweep in time order that computes every
// op's causal past as a vector clock over sessions (pipelined sessions
// need a bounded set of in-flight ops beside each entry; see vclock). A
// read is stale when a put on its key in its causal past is newer than
// what it returned — later in the log, or causally after it (the
// WriteCORead pattern of Bouajjani et al., POPL 2017) — or when it found
// nothing although there is one (WriteCOInitRead). A put logged before a
// put in its own causal past is CyclicCF. A stale read is attributed to
// the most specific guarantee that explains how the newer put reached the
// reader (see classifier). A cycle in causal order (CyclicCO) needs a read
// that returned before its put was invoked; such reads are found first and
// the graph is searched only when there are some. A read of a value no put
// wrote is W6 ThinAirRead; one that returned before its put was invoked,
// off any cycle, is W6 FutureRead. Cost is O(n log n + n·S) time for n
// ops and S sessions; a 100,000-op history checks in well under a second.
//
// S1 is checked per key over strong reads and all puts. A put that is
// weak or of unknown outcome has no known completion: it enters with the
// interval from its invocation to the earliest return of a completed
// strong op causally after it (or forever). That is weaker than "before
// every op causally after it", so it can hide a violation, never invent
// one. Because values are unique per key, linearizability of a key is
// decided exactly in O(n log n) by ordering clusters (a put and the reads
// of its value; Gibbons and Korach 1997), where porcupine's general search
// is exponential in the number of concurrent ops and gives up on the hot
// keys of a pipelined run. Porcupine still draws the visualization of a
// failure (Options.VisualizePath) and, with Options.CrossCheck, checks
// every key again as a second opinion; the tests run both on thousands of
// random histories and they agree.
//
// Deletes enter the cluster check as clusters no read joins. A strong read
// that found nothing on a key with deletes leaves it (it could belong to
// any of them) and is checked on its own: a put that took effect before it
// needs a delete that can take effect in between (absentReads). That
// never reports a linearizable history but misses what only several such
// reads together show; on random small histories it catches 285 of the
// 295 that porcupine's search finds not linearizable.
//
// When the run hands over its committed log (History.Log; the simulator
// does), S1 is also checked in its log form: the log is the order in which
// puts take effect, so on each key no put may be logged after one that was
// invoked once it had returned, with the same spans for weak puts and puts
// of unknown outcome (LogOrder). The check by values sees such an
// inversion only when a read returns the older value before a later put
// hides both; a recovery that logs a fast-path put behind a put invoked
// after it completed, on a key written again soon after, is otherwise
// missed. Puts on different keys may be logged in any order: they commute.
//
// C3 is checked in its slot form only: a read of another session's put
// must report a Slot (the log position its answer reflects) at least the
// put's, when both are known. Commit times are not recorded, so "visible
// only once committed" is not checked in time. Options.HOEarlyVisibility
// exempts strong reads (CURP-HO may answer them from uncommitted weak
// puts).
//
// E1 compares the final digests of replicas that applied the same number
// of slots. X1 flags an identity recorded twice with different results.
// Whether a retried put was applied twice cannot always be told from
// values read back (the second application writes the same value), so when
// the run hands over its committed log (History.Log; the simulator does)
// X1 is also checked against what the replicas applied: the log replayed
// with each identity taking effect once, at its first appearance, must
// give each replica's digest at its applied index. The digest covers each
// key's value and the slot that wrote it, so that catches a retry applied
// again (even one that rewrote the value its key held), and a logged write
// skipped as a duplicate it was not.
//
// # Limits
//
// Timestamps from different client processes are comparable only if they
// share a clock; skew shows up as false S1 or FutureRead reports. Without
// slots, a put's place relative to a concurrent put is unknown, so W1 and
// W5 accept any value not causally older. D1 (durability) is not checked
// directly; a lost write shows up as a stale read (S1, W5).
package checker
