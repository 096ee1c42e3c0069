// Package weakpath holds what CURP-HT's and CURP-HO's client cores share on
// the weak path: the replica a client sends its weak reads to (Binding)
// and what each session has observed of the log (Floors), which every weak
// read carries so that the replica answering it reflects the session's
// causal past (the replicas' side is package readgate).
//
// A session's causal past is ordered by the log, but a fast-path result
// names only the slot its leader speculated with, and a new leader's replay
// may log the operation elsewhere. So a floor has two parts: the highest
// committed slot the session observed, which every replica's log agrees on,
// and the newest speculative position (term and slot), which stands for the
// speculating leader's log up to it.
package weakpath
