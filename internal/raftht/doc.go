// Package raftht is the replica of Raft-HT and of the causal-session
// baselines built on its server (MongoDB-style sessions, Pileus and
// Pileus-HT): Raft, untouched, for strong operations and for every write,
// with weak reads answered by whichever replica receives them from its
// applied state.
//
// A strong operation neither knows nor waits for weak ones: it is logged by
// the leader and answered once applied, as in the Raft baseline. A weak
// write takes the same path (one round trip to the leader plus the commit)
// and is answered with its slot. A weak read is answered by the replica it
// is sent to — the client's closest — with the value, the slot of the
// key's last write and the replica's applied index. A read that carries a
// floor (Request.MinApplied: the highest slot its session has observed)
// waits in a read gate until the replica's state reflects it; one that also
// carries FlagServeNow is refused at once instead (wire.BehindReply), so
// that the client reads where the floor is met. A floor may also name a
// position, term and slot: a weak write the leader answered once it logged
// it (wire.FlagAckOnLog). The read waits for that very entry, and is
// answered lost (wire.LostReply) once another entry took its place; the
// client then reads through the log. Which of these a client asks for is
// its protocol's difference (package rafthtclient).
package raftht
