package wire

import (
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
)

// Type is the first byte of every encoded message.
type Type uint8

const (
	TypeHello Type = iota + 1
	TypeRaft
	TypeRequest
	TypeReply
	TypeRecover
	TypeRecoverReply
	TypeWitnessSync
	TypeWitnessSyncReply
	TypeClock
	TypeEPaxos
	TypeStaleRecord
)

func (t Type) String() string {
	switch t {
	case TypeHello:
		return "hello"
	case TypeRaft:
		return "raft"
	case TypeRequest:
		return "request"
	case TypeReply:
		return "reply"
	case TypeRecover:
		return "recover"
	case TypeRecoverReply:
		return "recover-reply"
	case TypeWitnessSync:
		return "witness-sync"
	case TypeWitnessSyncReply:
		return "witness-sync-reply"
	case TypeClock:
		return "clock"
	case TypeEPaxos:
		return "epaxos"
	case TypeStaleRecord:
		return "stale-record"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Message is anything that travels between two nodes.
type Message interface {
	Type() Type
	appendPayload(b []byte) []byte
}

// Envelope is a message together with its destination, as a protocol core
// emits it.
type Envelope struct {
	To  NodeID
	Msg Message
}

// Hello opens every connection so that the receiver knows who is talking and
// from which site (for latency emulation and reply routing).
type Hello struct {
	From NodeID
	Site uint32
}

// Raft carries one etcd raft message between replicas. M.Type must be set.
// M.Responses is not carried: raft fills it only in messages to the local
// storage threads, which never leave the node.
type Raft struct {
	M *raftpb.Message
}

// RequestFlags qualify a request.
type RequestFlags uint8

const (
	// FlagRetry marks a re-send of an operation the client already sent.
	FlagRetry RequestFlags = 1 << iota
	// FlagReplyWanted asks the receiving replica to answer a weak
	// operation that every replica receives (CURP-HO's bound replica).
	FlagReplyWanted
	// FlagServeNow asks the replica to answer a weak read at once or
	// refuse it (BehindReply) rather than wait for the read's floor: the
	// client then reads where the floor is met (Pileus).
	FlagServeNow
	// FlagAckOnLog asks the leader to answer a weak write once its own log
	// holds it durably, before any other replica does: one round trip
	// less from a far site, and the write is lost if the leader fails
	// before it is replicated (MongoDB's write concern w:1).
	FlagAckOnLog
	// FlagReissue marks a weak write already acknowledged from an
	// EPaxos-HO instance, sent again as strong in case that instance is
	// lost; the request's AckedAt names where it was acknowledged.
	FlagReissue

	// knownRequestFlags has every flag above set; it stays last so that a
	// new flag extends it.
	knownRequestFlags RequestFlags = 1<<iota - 1
)

// Request carries one operation from a client to a replica.
type Request struct {
	Op Op
	// AckedBelow is the session's lowest sequence number the client has not
	// yet seen complete: replicas may forget the replies of earlier ones.
	AckedBelow uint64
	// PrevWeak is the sequence number of the session's previous weak write
	// while the client does not know it committed (0 otherwise), so the
	// leader can log weak writes in session order.
	PrevWeak uint64
	// MinApplied is the highest committed slot the session has observed: a
	// replica answers a weak read only from a state that reflects the
	// committed log up to it, so the read cannot miss anything in the
	// session's causal past.
	MinApplied uint64
	// SpecFloor is the newest speculative position the session observed (a
	// fast-path reply's term and slot), which a replay may move: a replica
	// serves the read once its log holds that very entry, which stands for
	// the leader's log up to it (see the weakpath package).
	SpecFloor Position
	// ReadAfter names other sessions' weak writes the session has read
	// before they were known committed (CURP-HO's strong reads may return
	// a pooled weak write): a replica answers a weak read only once it has
	// applied each of them.
	ReadAfter []OpID
	Flags     RequestFlags
	// After names EPaxos instances the operation must follow: for each
	// replica's row, the latest instance of the session's operations that
	// completed (EPaxos-HO). A strong operation takes them among its
	// dependencies; a weak read waits until they executed where it is
	// answered.
	After []Instance
	// Writes are the session's weak writes the client does not know
	// executed (EPaxos-HO), carried by a strong operation: the replica
	// orders them before it, once each, so that none is lost if the
	// replica that acknowledged it is gone.
	Writes []Op
	// WriteSlots holds, for each of Writes, the slot at which it was
	// acknowledged (Instance.Slot): a replica that recovers that instance
	// and finds no replica holding its command proposes these writes in
	// it rather than a no-op, so each keeps its place in its session's
	// order. Zero for one whose slot the client does not know.
	WriteSlots []uint64
	// AckedAt is, for a request marked FlagReissue, the slot at which its
	// weak write was first acknowledged (as WriteSlots').
	AckedAt uint64
}

// Position names a log entry by its index and the term that wrote it. Two
// logs holding the same position hold the same entries up to it (raft's
// log matching), committed or not.
type Position struct {
	Term, Index uint64
}

// IsZero reports whether p names no entry.
func (p Position) IsZero() bool { return p == Position{} }

// Less orders positions as raft orders a leader's entries: by term, then
// by index.
func (p Position) Less(q Position) bool {
	return p.Term < q.Term || p.Term == q.Term && p.Index < q.Index
}

// ReplyKind says which step of a protocol a reply answers.
type ReplyKind uint8

const (
	// ReplySpeculative is the leader's immediate, uncommitted result.
	ReplySpeculative ReplyKind = iota + 1
	// ReplyWitness says whether a witness recorded the operation.
	ReplyWitness
	// ReplySync is the result after commit and in-order execution.
	ReplySync
	// ReplyWeak answers a weak operation.
	ReplyWeak
	// ReplyNotLeader tells the client to send to Reply.Leader instead.
	ReplyNotLeader
)

func (k ReplyKind) String() string {
	switch k {
	case ReplySpeculative:
		return "speculative"
	case ReplyWitness:
		return "witness"
	case ReplySync:
		return "sync"
	case ReplyWeak:
		return "weak"
	case ReplyNotLeader:
		return "not-leader"
	}
	return fmt.Sprintf("reply(%d)", uint8(k))
}

// Reply answers a Request. Which fields matter depends on Kind and protocol.
type Reply struct {
	Kind ReplyKind
	ID   OpID
	// Term and Leader are the sender's view of the current raft term and
	// leader, so clients can follow leader changes.
	Term   uint64
	Leader NodeID
	// Ok: for a speculative reply, no earlier uncommitted operation
	// conflicts; for a witness reply, the operation was recorded.
	Ok bool
	// Found: a Get found a value (Value may be empty and still found).
	Found bool
	Value []byte
	// Slot is the log index of the operation (sync, speculative) or, for a
	// weak read, of the last write to the key the replica has applied.
	Slot uint64
	// Applied is the sender's applied log index.
	Applied uint64
	// Deps lists sequence numbers of this session's weak writes the witness
	// holds (CURP-HO causal dependencies).
	Deps []uint64
	// DepsApplied is the sequence number of the newest weak write of the
	// session before the operation that the witness has applied, found along
	// the operation's chain of previous weak writes (CURP-HO): it and every
	// earlier weak write of the session are committed there. 0 if none.
	DepsApplied uint64
	// ReadDep is the latest pending weak write on the key (CURP-HO).
	ReadDep OpID
	// Incarnation identifies the run of the witness that sent a witness
	// reply: a replica draws a new one at every start, because a restart
	// empties its witness pool.
	Incarnation uint64
	// Witnesses lists, in a leader's speculative reply, the witness
	// incarnations whose records the leader knows to be complete: the only
	// witness replies a client may count towards the fast path.
	Witnesses []Witness
	// Revision is the key's version when a Get found it in the applied
	// state; zero otherwise.
	Revision Revision
}

// Revision is a key's version as etcd counts it: the slots of its last
// write and of its creation, and its writes since its creation.
type Revision struct {
	Mod, Create, Version uint64
}

// Witness names one run of a replica's witness.
type Witness struct {
	ID          NodeID
	Incarnation uint64
}

// Recover asks a witness, on behalf of a new leader, for the operations it
// recorded that are not applied yet.
type Recover struct {
	Term uint64
}

// RecoverReply lists a witness's recorded operations for a new leader.
type RecoverReply struct {
	Term uint64
	Ops  []Op
	// PrevWeak, when not empty, holds for each of Ops the sequence number
	// of its session's weak write before it (CURP-HO): a replay waits for
	// that write as the request did.
	PrevWeak []uint64
	// Incarnation is the witness's run (see Reply.Incarnation).
	Incarnation uint64
	// Complete says the witness holds every record it acknowledged; a
	// witness that restarted lost its records and is not complete until a
	// leader committed everything it could have acknowledged before.
	Complete bool
	// PooledAt, when not empty, holds for each of Ops the log's clock at
	// which the witness pooled it (see StaleRecord.PooledAt).
	PooledAt []uint64
}

// StaleRecord is a witness record a replica has held long enough to hand
// to the leader, which logs its operation unless it is logged or applied
// already (CURP's stale records).
type StaleRecord struct {
	Op Op
	// PrevWeak is the session's weak write before Op (Request.PrevWeak).
	PrevWeak uint64
	// PooledAt is the log's clock of a state of the witness that had not
	// applied Op: were Op applied after all, it was at that clock or later,
	// and its session cannot have been forgotten before the clock reached
	// PooledAt plus the expiry.
	// It lets the leader tell a record it may log from one that may have
	// outlived its operation.
	PooledAt uint64
}

// WitnessSync tells the leader which run of a witness is up and whether its
// records are complete. A leader counts a complete witness at once; an
// incomplete one only once it has committed every operation logged before
// the sync, which covers every fast-path operation the witness's lost
// records could have helped complete.
type WitnessSync struct {
	Incarnation uint64
	Complete    bool
}

// WitnessSyncReply tells a witness that the leader of Term counts its run
// Incarnation as complete.
type WitnessSyncReply struct {
	Term        uint64
	Incarnation uint64
}

// Clock is a log entry, never a message between nodes: the leader logs
// one now and then so that every replica, applying the log, agrees on how
// much time has passed and forgets the same idle sessions at the same
// slot. Now is the leader's count of ticks, which the replicas' applied
// clock only ever takes forward; ExpireAfter is how many ticks a session
// may stay idle, the leader's setting carried in the log so that replicas
// configured differently still agree.
type Clock struct {
	Now, ExpireAfter uint64
}

func (*Recover) Type() Type          { return TypeRecover }
func (*Clock) Type() Type            { return TypeClock }
func (*WitnessSync) Type() Type      { return TypeWitnessSync }
func (*WitnessSyncReply) Type() Type { return TypeWitnessSyncReply }
func (*RecoverReply) Type() Type     { return TypeRecoverReply }
func (*StaleRecord) Type() Type      { return TypeStaleRecord }
func (*Hello) Type() Type            { return TypeHello }
func (*Raft) Type() Type             { return TypeRaft }
func (*Request) Type() Type          { return TypeRequest }
func (*Reply) Type() Type            { return TypeReply }

// LostReply tells a client that its weak read's speculative floor was
// replayed elsewhere: only the leader can say where (a weak reply that is
// not ok).
func LostReply(id OpID) *Reply { return &Reply{Kind: ReplyWeak, ID: id, Ok: false} }

// BehindReply refuses a weak read flagged FlagServeNow whose floor the
// replica's state, at applied, does not reach yet. On the wire it is a
// LostReply: either way the client reads elsewhere (Pileus at the leader,
// and from there through the log).
func BehindReply(id OpID, applied uint64) *Reply {
	return &Reply{Kind: ReplyWeak, ID: id, Ok: false, Applied: applied}
}

// Lost reports whether r is a LostReply.
func (r *Reply) Lost() bool { return r.Kind == ReplyWeak && !r.Ok }
