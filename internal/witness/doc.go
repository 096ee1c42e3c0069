// Package witness is the pool of operations a replica has seen but not yet
// applied, indexed by key, by identity and by session.
//
// CURP witnesses use it to accept an operation only when nothing recorded
// conflicts with it; a CURP leader uses it for the same conflict test over
// its uncommitted operations; CURP-HO adds weak writes to it so strong
// operations can report causal and read dependencies. Records leave the pool
// when the replica applies their operation.
package witness
