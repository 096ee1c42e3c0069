package wire

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Raft messages are encoded field by field: protobuf's reflection-driven
// Marshal costs several times more per message, and raft's hot messages
// (MsgApp, MsgAppResp, heartbeats) carry only integers and entry data.
// v3.7 messages use pointer fields, so presence is kept in a bitmask and a
// decoded message gets back exactly the fields that were set. Snapshots are
// rare and large; they keep protobuf's encoding.

const (
	hasType = 1 << iota
	hasTo
	hasFrom
	hasTerm
	hasLogTerm
	hasIndex
	hasCommit
	hasVote
	hasReject
	hasRejectHint
	hasSnapshot
	hasAll = hasSnapshot<<1 - 1
)

const (
	entHasTerm = 1 << iota
	entHasIndex
	entHasType
	entHasAll = entHasType<<1 - 1
)

func (r *Raft) appendPayload(b []byte) []byte {
	m := r.M
	var mask uint64
	set := func(present bool, bit uint64) {
		if present {
			mask |= bit
		}
	}
	set(m.Type != nil, hasType)
	set(m.To != nil, hasTo)
	set(m.From != nil, hasFrom)
	set(m.Term != nil, hasTerm)
	set(m.LogTerm != nil, hasLogTerm)
	set(m.Index != nil, hasIndex)
	set(m.Commit != nil, hasCommit)
	set(m.Vote != nil, hasVote)
	set(m.Reject != nil, hasReject)
	set(m.RejectHint != nil, hasRejectHint)
	set(m.Snapshot != nil, hasSnapshot)
	b = binary.AppendUvarint(b, mask)
	b = binary.AppendUvarint(b, uint64(m.GetType()))
	for _, v := range [...]uint64{m.GetTo(), m.GetFrom(), m.GetTerm(), m.GetLogTerm(),
		m.GetIndex(), m.GetCommit(), m.GetVote(), m.GetRejectHint()} {
		b = binary.AppendUvarint(b, v)
	}
	b = appendBool(b, m.GetReject())
	b = appendBytes(b, m.Context)
	b = binary.AppendUvarint(b, uint64(len(m.Entries)))
	for _, e := range m.Entries {
		var em byte
		if e.Term != nil {
			em |= entHasTerm
		}
		if e.Index != nil {
			em |= entHasIndex
		}
		if e.Type != nil {
			em |= entHasType
		}
		b = append(b, em)
		b = binary.AppendUvarint(b, e.GetTerm())
		b = binary.AppendUvarint(b, e.GetIndex())
		b = binary.AppendUvarint(b, uint64(e.GetType()))
		b = appendBytes(b, e.Data)
	}
	if m.Snapshot != nil {
		snap, err := proto.Marshal(m.Snapshot)
		if err != nil {
			// A snapshot built by raft from our own state always marshals;
			// failing here means memory corruption, not bad input.
			panic(fmt.Sprintf("wire: marshal raft snapshot: %v", err))
		}
		b = appendBytes(b, snap)
	}
	return b
}

// raftValues holds a decoded message's scalar fields in one allocation; the
// message's pointer fields point into it.
type raftValues struct {
	typ                                                      raftpb.MessageType
	to, from, term, logTerm, index, commit, vote, rejectHint uint64
	reject                                                   bool
}

func (r *Raft) decode(d *decoder) {
	// One private copy of the payload: entry data and context alias it.
	d.buf = append([]byte(nil), d.buf...)
	mask := d.uvarint()
	if mask&^hasAll != 0 {
		d.fail(fmt.Errorf("wire: bad raft field mask %#x", mask))
		return
	}
	v := new(raftValues)
	t := d.uvarint()
	if t > uint64(raftpb.MessageType_MsgForgetLeader) {
		d.fail(fmt.Errorf("wire: bad raft message type %d", t))
		return
	}
	v.typ = raftpb.MessageType(t)
	if raft.IsLocalMsg(v.typ) {
		d.fail(fmt.Errorf("wire: raft message %v is local-only", v.typ))
		return
	}
	for _, p := range [...]*uint64{&v.to, &v.from, &v.term, &v.logTerm,
		&v.index, &v.commit, &v.vote, &v.rejectHint} {
		*p = d.uvarint()
	}
	v.reject = d.bool()
	m := &raftpb.Message{}
	pick := func(bit uint64, p *uint64) *uint64 {
		if mask&bit != 0 {
			return p
		}
		return nil
	}
	if mask&hasType != 0 {
		m.Type = &v.typ
	}
	m.To = pick(hasTo, &v.to)
	m.From = pick(hasFrom, &v.from)
	m.Term = pick(hasTerm, &v.term)
	m.LogTerm = pick(hasLogTerm, &v.logTerm)
	m.Index = pick(hasIndex, &v.index)
	m.Commit = pick(hasCommit, &v.commit)
	m.Vote = pick(hasVote, &v.vote)
	m.RejectHint = pick(hasRejectHint, &v.rejectHint)
	if mask&hasReject != 0 {
		m.Reject = &v.reject
	}
	if ctx := d.bytesAlias(); len(ctx) > 0 {
		m.Context = ctx
	}
	// Each entry takes at least 5 bytes: presence byte, three varints, length.
	if n := d.count(5); n > 0 {
		ents := make([]raftpb.Entry, n)
		vals := make([]uint64, 2*n)
		types := make([]raftpb.EntryType, n)
		m.Entries = make([]*raftpb.Entry, n)
		for i := range ents {
			e := &ents[i]
			em := d.byte()
			if em&^entHasAll != 0 {
				d.fail(fmt.Errorf("wire: bad raft entry mask %#x", em))
				return
			}
			vals[2*i] = d.uvarint()
			vals[2*i+1] = d.uvarint()
			et := d.uvarint()
			if et > uint64(raftpb.EntryType_EntryConfChangeV2) {
				d.fail(fmt.Errorf("wire: bad raft entry type %d", et))
				return
			}
			types[i] = raftpb.EntryType(et)
			if em&entHasTerm != 0 {
				e.Term = &vals[2*i]
			}
			if em&entHasIndex != 0 {
				e.Index = &vals[2*i+1]
			}
			if em&entHasType != 0 {
				e.Type = &types[i]
			}
			if data := d.bytesAlias(); len(data) > 0 {
				e.Data = data
			}
			m.Entries[i] = e
		}
	}
	if mask&hasSnapshot != 0 {
		snap := d.bytesAlias()
		if d.err != nil {
			return
		}
		m.Snapshot = &raftpb.Snapshot{}
		if err := proto.Unmarshal(snap, m.Snapshot); err != nil {
			d.fail(fmt.Errorf("wire: raft snapshot: %w", err))
			return
		}
	}
	r.M = m
}
