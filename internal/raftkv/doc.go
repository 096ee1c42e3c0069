// Package raftkv is the Raft baseline: the replicated state machine alone.
//
// The client sends each operation to the leader, which logs it, reads
// included (linearizable reads through the log), and answers after commit
// and in-order execution: one round trip from the client to the leader plus
// one from the leader to a majority. A follower answers "not the leader"
// with the leader it knows, and the client follows. There is no weak path:
// weak operations are served as strong ones.
package raftkv
