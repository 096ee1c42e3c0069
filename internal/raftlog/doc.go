// Package raftlog is the replicated log every protocol in hybridkv stands on:
// an etcd raft RawNode, driven deterministically, whose state a Disk keeps
// across restarts. Raft reads its log from an in-memory copy and runs with
// asynchronous storage writes: each round hands its driver a Write, and raft's
// answers that vote for a leader or an entry wait until that write is
// durable, while the core goes on (see Write).
//
// The log never calls its owner. Ready returns a Round: in the order raft
// produced them, the snapshot to install, the entries appended, the
// committed entries to apply and the messages to send now or once the
// Write is durable; the owner acts on each in turn.
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
//
// Followers also learn commits from each other's acknowledgements, a
// one-way delay sooner than from the leader (see peercommit.go).
package raftlog
