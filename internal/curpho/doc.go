// Package curpho is CURP-HO: CURP with a weak path of optimal latency.
//
// A client is bound to its closest replica. It broadcasts a weak write to
// every replica, and the write completes on the bound replica's
// acknowledgement alone: one round trip to the closest replica, about zero
// when they share a site. Every replica pools the write; the leader logs it
// in session order (each operation names its session's previous weak write,
// and the leader holds an operation back until that write is logged) and
// tells the client once it is committed. A weak read goes to the bound
// replica, which answers from the session's own pooled writes, else from its
// applied state.
//
// Strong operations are CURP's, with two additions. Each witness reports the
// session's weak writes it holds (causal dependencies) and, for a strong
// read, the latest pooled weak write on the key from any session (the read
// dependency); the leader's speculative read returns that write's value.
// The fast path then also needs every uncommitted weak write of the session
// in every superquorum member's dependencies, and for a read the same read
// dependency everywhere: a weak write is observed by another session's
// strong read before commit only when a superquorum holds it, so it survives
// failures.
package curpho
