// Package raftlog is the replicated log every protocol in hybridkv stands on:
// an etcd raft RawNode, driven deterministically, whose state a Disk keeps
// across restarts (raft reads it from an in-memory copy; every Ready round is
// persisted to the Disk before anything it produced is sent).
//
// A slot is a raft log index. Raft gives the log, commit on a majority, leader
// election and in-order delivery of committed entries; the protocols add their
// fast paths in front of it.
//
// Determinism. etcd raft draws its randomized election timeout from
// crypto/rand, which would make simulated runs irreproducible. So followers
// and candidates are never ticked inside raft: this package runs their
// election timer itself, drawing the timeout in [E, 2E) from the seeded
// source the driver supplies, and calls Campaign when it fires. Only the
// leader's raft is ticked (heartbeats carry no randomness). Raft's own
// CheckQuorum is off because it would also make followers ignore votes for a
// lease measured by ticks they no longer receive; instead the leader is sent
// raft's check-quorum message every E ticks, which steps it down exactly as
// raft would when a majority has gone quiet. PreVote stays on, so a replica
// that was cut off cannot disrupt the cluster when it returns.
package raftlog
