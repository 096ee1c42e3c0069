// Package readgate is the replica side of CURP-HT's and CURP-HO's weak
// reads: a gate that answers a weak read only from a state reflecting its
// session's causal past, the floor the client stamped on it (package
// weakpath keeps the clients' side).
//
// A floor's committed slot is one every replica's log agrees on. Its
// speculative position (term and slot) stands for the speculating leader's
// log up to it: a replica holding that very entry holds that log (raft's
// log matching). A replica that finds another entry committed at that slot
// knows the speculation was replayed elsewhere; it says so (Lost, answered
// with wire.LostReply), and the client asks the leader instead.
package readgate
