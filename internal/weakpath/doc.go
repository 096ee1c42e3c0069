// Package weakpath holds what CURP-HT's and CURP-HO's weak paths share: the
// replica a client sends its weak reads to (Binding), what each session has
// observed of the log (Floors), and the replica-side gate that answers a
// weak read only from a state reflecting its session's causal past (Reads).
//
// A session's causal past is ordered by the log, but a fast-path result
// names only the slot its leader speculated with, and a new leader's replay
// may log the operation elsewhere. So a floor has two parts: the highest
// committed slot the session observed, which every replica's log agrees on,
// and the newest speculative position (term and slot), which stands for the
// speculating leader's log up to it. A replica holding that very entry
// holds that log (raft's log matching). A replica that finds another entry
// committed at that slot knows the speculation was replayed elsewhere; it
// says so, and the client asks the leader instead (Lost).
package weakpath
