// Package rafthtclient is the client core of the protocols built on
// Raft-HT's server (package raftht): Raft-HT, MongoDB-style causal
// sessions, Pileus and Pileus-HT. They share the strong path (the Raft
// baseline's client) and send weak writes to the leader's log; each is a
// Policy for weak operations:
//
//   - Raft-HT: a weak read is answered at once by the closest replica, and
//     the client keeps the fresher of that answer and what its session
//     last wrote or read of the key (a per-session cache). That gives
//     read-your-writes and monotonic reads per key, not causal visibility
//     across keys.
//   - MongoDB-style causal sessions: each weak read carries the highest
//     slot its session has observed (MongoDB's afterClusterTime), and the
//     closest replica answers once its applied state reaches it.
//   - Pileus: as MongoDB-style sessions, but every write is strong, and a
//     replica behind the read's floor refuses at once, so that the read
//     goes to the leader instead of waiting (Pileus reads where its
//     guarantee can be met).
//   - Pileus-HT: Pileus with weak writes through the leader's log.
package rafthtclient
