// Package epaxos is Egalitarian Paxos as a deterministic replica core:
// every replica leads the instances of the commands its clients send it,
// orders them by their dependencies rather than by a log, and answers a
// command once it has executed it.
//
// The design is EPaxos with the fast quorum of n−1 replicas (Moraru,
// Andersen and Kaminsky, SOSP '13, before its optimisation of the fast
// quorum), without the seq attribute, with Sutra's separate accepted
// ballot, and with a recovery that needs no TryPreAccept; docs/protocols.md
// gives the argument and the bug classes it rules out. In brief:
//
//   - A command leader pre-accepts its command at ballot 0 with the
//     dependencies it knows. A replica adds those it knows and says
//     whether it added none (Agreed). Agreement from n−1 replicas, the
//     leader's own included, commits on the fast path; otherwise the union
//     of a majority's dependencies is accepted by a majority (slow path).
//   - Recovery at a higher ballot takes a majority's states: a committed
//     one; else the accepted one of the highest ballot; else the leader's
//     dependencies if ⌊n/2⌋ replicas other than the leader agreed at
//     ballot 0 (with the leader they are a majority that saw nothing
//     else); else a fresh pre-accept of the command at the new ballot with
//     no fast path; else a no-op.
//   - Commands execute once every command they depend on, transitively,
//     is committed: strongly connected components in dependency order,
//     the commands of one in instance order. A command is answered only
//     once executed, which keeps that order linearizable.
//
// Replica state is durable before any message that depends on it: replies
// to pre-accepts, accepts and prepares, the command leader's own vote, a
// recovery's own promise, and the instance numbers it hands out.
package epaxos
