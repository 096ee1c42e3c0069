// Package checker verifies a recorded history (package history) against
// the guarantees of the specification: S1 (linearizability of strong ops
// and weak writes), W1–W6 (session guarantees, causal visibility, no
// thin-air values), C1–C3 (how weak and strong ops of one session
// interact, and when weak writes become visible), E1 (replicas converge)
// and X1 (exactly once) — those of them the protocol that ran claims.
//
// # What is checked: the protocol's claims
//
// Each protocol declares the guarantees it claims (guarantees.Claims, in
// package clientcores; package protocols gives the checker's Options for
// a protocol by name), and the checker verifies exactly that set on every
// run: a protocol may promise less than another, never silently.
// Options.Claims.Set is the set; its zero value means every guarantee, so
// Options{} checks everything. A violation of a guarantee not claimed is
// never reported, and a pass whose guarantees are all unclaimed is
// skipped (the sweep of W1–W5, C1 and C2; the search for cycles and future
// reads, W5 and W6; C3; S1; E1; X1 against the committed log). D1 can be
// claimed but is not checked (see Limits). Result.Verified names what was
// checked, Result.Unclaimed what the protocol does not claim, and
// Result.NotVerified what it claims beyond the checker (D1); Result.Scope
// puts them in one line for reports.
//
// Most properties are filtered by the claim alone: S1 (the cluster check,
// LogOrder, a transaction's TxnInternal and LostUpdate), W6 (ThinAirRead,
// FutureRead), C3, E1, X1, and the W-violations that are not stale reads:
// CyclicCO (filed under W5) and CyclicCF (under W3 when the misordered
// writes are of one session, W4 otherwise). A stale read is different: it
// breaks causal visibility (W5) whatever else it breaks, and is filed under
// the most specific guarantee that explains it (see classifier). With a
// subset claimed, a stale read is a violation exactly when some claimed
// pattern explains it, with some witness (a newer write in its past), and
// it is reported under the most specific such pattern: each pattern is
// tested on its own, so a monotonic-reads failure that would be filed
// under W3 is reported as W2 by a protocol that claims W2 but not W3. With
// W5 claimed, every stale read is reported, as before. Early strong
// visibility (Claims.EarlyStrongVisibility, CURP-HO) exempts strong reads
// from C3 (below). When acknowledged weak writes may be lost
// (Claims.WeakWritesMayBeLost: the leader answered them once it logged
// them), every weak write enters as of unknown outcome, with no slot:
// it may or may not have taken effect, and no later operation is owed it.
//
// # Orders
//
// Session order a → b holds when a and b share a session and a returned
// before b was invoked; ops of one session in flight together are
// concurrent. Reads-from w → r holds when r returned w's value; the
// checker relies on every put on a key writing a distinct value (benchmark
// values embed the writer's identity), the puts of transactions included,
// and refuses a history where two do.
// Causal order is the transitive closure of both plus real-time order
// among strong ops (left out for a protocol that claims
// Claims.NoStrongRealTime: EPaxos-HO). A write's place in the log is its Slot when the
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
// the most specific claimed guarantee that explains how the newer put
// reached the reader (see classifier); a read that found nothing on a key
// with deletes, only to one that explains it whichever delete it read. A
// cycle in causal order (CyclicCO) needs a read
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
// only once committed" is not checked in time. A protocol that claims
// early strong visibility (Options.Claims.EarlyStrongVisibility: CURP-HO,
// which may answer strong reads from uncommitted weak puts) has its strong
// reads exempted.
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
// # Transactions
//
// A transaction (kind wire.Txn) is checked as the single-key operations it
// is made of, its sub-operations, and so is a scan (kind wire.Scan), a
// transaction of one range read that may be weak (a report names its reads
// "scan 5.3"): each is an op of the transaction's
// session with its interval, level, outcome, slot and identity, so every
// check above takes it as it takes a get, a put or a delete, and the
// committed log finds it at the transaction's index. Sub-operations of
// one transaction are simultaneous, never in session order with each
// other. A violation names one as "txn 5.3 then[1]" (the transaction and
// the compare or operation of its program it comes from) and lists it as
// that single-key operation, with the transaction beside it (Op.Txn).
//
// A transaction that completed is replayed, the branch that ran in order,
// against what the branch itself wrote so far; its sub-operations are:
//
//   - per key the branch writes, its last write: a put of its value, or a
//     delete. A range delete makes every key of its span absent, whether
//     or not it held a value, so it is a delete of each key of its span
//     that some put of the history writes (the others are absent
//     throughout, and need none). Values a branch overwrites itself are
//     never visible outside it;
//   - reads of the state before the transaction, for the keys the branch
//     had not written yet: each value a range read returned (KeysOnly and
//     CountOnly ranges return none), each previous value a put or a delete
//     returned (PrevKV), and a read that found nothing for each key some
//     put writes that a span shows absent: within a range read's span but
//     not returned (up to its last returned key when its limit cut it:
//     answers are taken to come in key order, as etcd's do), within a
//     PrevKV delete's span but not listed, within a CountOnly range that
//     counted none. Such a read is a read of "absent" like any other (see
//     above): it is explained by the initial state or by any delete,
//     range deletes' included, so it is as sound as a get that found
//     nothing;
//   - what its compares show, when all held (the then branch ran) or, if
//     there is one, when it failed: a value compare that held found the
//     key present (a value compare on an absent key fails, as etcd's), so
//     one that asked for equality is a read of its operand, and any other
//     must agree with the transaction's other reads of the key; a failed
//     value compare tells nothing; a version, create or mod number only an
//     absent key has is a read that found nothing, and one only a present
//     key has must agree with the other reads. Other compares (other
//     numbers, one of several that failed) are not checked.
//
// A read of a key the branch wrote before must show what it wrote, and two
// reads of one key before the branch writes it (compares included) must
// agree: a transaction takes effect at one point (TxnInternal, under S1
// whatever its level). Nor may two completed transactions both read one
// version of a key and write the key: each must follow that version
// directly (LostUpdate, under S1; the per-key checks take a transaction's
// read and write of a key apart, and cannot see it).
//
// Atomicity across keys is checked where causal order reaches it. The
// writes of one branch form a group: a read of one brings all of them into
// the reader's causal past (clocks hold a group's marker), so a read
// causally after it that misses another, or returns a value older than
// it, is stale (W5, or the guarantee that explains how the reader got
// there); and the span S1 gives each ends where any one's must. The reads
// of one transaction read one state, so each has in its past what any of
// them read: a range that returns one write of a transaction and a value
// older than another of its writes (in the log, or in causal order) is
// stale. What only real time shows across keys is not checked: S1 is
// decided key by key, so two transactions' writes may linearize in
// opposite orders on two keys, and two readers with no causal link may see
// a transaction's writes on different keys half applied in opposite ways.
//
// A transaction without a result contributes, from each branch, the last
// write per key, of unknown outcome, as a put of unknown outcome does; a
// write both branches make alike is one sub-operation, and the writes of
// either branch alone form its group. Its reads and compares tell nothing.
//
// X1 flags a transaction recorded twice with different programs, results
// or slots. Not checked: that a transaction's writes follow what it read
// (its writes' causal past holds only what preceded the transaction in
// its session, which can hide a W4 violation, never invent one); which
// keys a KeysOnly range returned present, beyond agreeing with the
// transaction's own reads and writes; a CountOnly count other than zero;
// the Version, Create and Mod numbers answers carry. A weak transaction's
// writes get a weak put's span in S1, although every protocol logs a
// transaction before it answers. Cost stays O(n log n + n·S) in the number
// of sub-operations, which counts, per transaction, its written keys,
// returned values, and the keys some put writes within its range deletes'
// spans and within the spans its reads show absent: a range over many
// written keys is as many operations.
//
// # Limits
//
// Timestamps from different client processes are comparable only if they
// share a clock; skew shows up as false S1 or FutureRead reports. Without
// slots, a put's place relative to a concurrent put is unknown, so W1 and
// W5 accept any value not causally older. D1 (durability) is not checked
// directly; a lost write shows up as a stale read (S1, W5).
package checker
