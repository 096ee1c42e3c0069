package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Raft messages are encoded field by field: protobuf's reflection-driven
// Marshal costs several times more per message, and raft's hot messages
// (MsgApp, MsgAppResp, heartbeats) carry only integers and entry data.
// v3.7 messages use pointer fields, so presence is kept in a bitmask and a
// decoded message gets back exactly the fields that were set; byte fields
// have a presence bit too, because protobuf tells an empty one from an
// absent one. Snapshots are rare and large; they keep protobuf's encoding.
//
// Responses is not encoded: raft sets it only on messages to the local
// storage threads (MsgStorageAppend, MsgStorageApply), which are never sent.

const (
	// hasType is always set: every message raft sends has a type, and
	// without it the type would read as the local-only MsgHup.
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
	hasContext
	hasAll = hasContext<<1 - 1
)

const (
	entHasTerm = 1 << iota
	entHasIndex
	entHasType
	entHasData
	entHasAll = entHasData<<1 - 1
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
	set(m.Context != nil, hasContext)
	b = binary.AppendUvarint(b, mask)
	b = binary.AppendUvarint(b, uint64(m.GetType()))
	for _, v := range [...]uint64{m.GetTo(), m.GetFrom(), m.GetTerm(), m.GetLogTerm(),
		m.GetIndex(), m.GetCommit(), m.GetVote(), m.GetRejectHint()} {
		b = binary.AppendUvarint(b, v)
	}
	b = appendBool(b, m.GetReject())
	if m.Context != nil {
		b = appendBytes(b, m.Context)
	}
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
		if e.Data != nil {
			em |= entHasData
		}
		b = append(b, em)
		b = binary.AppendUvarint(b, e.GetTerm())
		b = binary.AppendUvarint(b, e.GetIndex())
		b = binary.AppendUvarint(b, uint64(e.GetType()))
		if e.Data != nil {
			b = appendBytes(b, e.Data)
		}
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

// decodedRaft holds a decoded message with the values its pointer fields
// point to, so that all of it costs one allocation.
type decodedRaft struct {
	r                                                        Raft
	m                                                        raftpb.Message
	typ                                                      raftpb.MessageType
	to, from, term, logTerm, index, commit, vote, rejectHint uint64
	reject                                                   bool
}

// decodedEntry is an entry with the values its pointer fields point to;
// a message's entries are allocated together as one slice of them.
type decodedEntry struct {
	e           raftpb.Entry
	term, index uint64
	typ         raftpb.EntryType
}

func decodeRaft(d *decoder) *Raft {
	// One private copy of the payload: entry data and context alias it.
	d.buf = append([]byte(nil), d.buf...)
	mask := d.uvarint()
	if d.err == nil && mask&^hasAll != 0 {
		d.fail(fmt.Errorf("wire: bad raft field mask %#x", mask))
	}
	if d.err == nil && mask&hasType == 0 {
		d.fail(errors.New("wire: raft message without a type"))
	}
	t := d.uvarint()
	if d.err == nil && t > uint64(raftpb.MessageType_MsgForgetLeader) {
		d.fail(fmt.Errorf("wire: bad raft message type %d", t))
	}
	if d.err == nil && raft.IsLocalMsg(raftpb.MessageType(t)) {
		d.fail(fmt.Errorf("wire: raft message %v is local-only", raftpb.MessageType(t)))
	}
	if d.err != nil {
		return nil
	}
	v := new(decodedRaft)
	v.typ = raftpb.MessageType(t)
	for _, p := range [...]*uint64{&v.to, &v.from, &v.term, &v.logTerm,
		&v.index, &v.commit, &v.vote, &v.rejectHint} {
		*p = d.uvarint()
	}
	v.reject = d.bool()
	m := &v.m
	pick := func(bit uint64, p *uint64) *uint64 {
		if mask&bit != 0 {
			return p
		}
		return nil
	}
	m.Type = &v.typ
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
	if mask&hasContext != 0 {
		m.Context = d.bytesAlias()
	}
	// Each entry takes at least 4 bytes: presence byte and three varints.
	if n := d.count(4); n > 0 {
		ents := make([]decodedEntry, n)
		m.Entries = make([]*raftpb.Entry, n)
		for i := range ents {
			de := &ents[i]
			e := &de.e
			em := d.byte()
			if em&^entHasAll != 0 {
				d.fail(fmt.Errorf("wire: bad raft entry mask %#x", em))
				return nil
			}
			de.term = d.uvarint()
			de.index = d.uvarint()
			et := d.uvarint()
			if et > uint64(raftpb.EntryType_EntryConfChangeV2) {
				d.fail(fmt.Errorf("wire: bad raft entry type %d", et))
				return nil
			}
			de.typ = raftpb.EntryType(et)
			if em&entHasTerm != 0 {
				e.Term = &de.term
			}
			if em&entHasIndex != 0 {
				e.Index = &de.index
			}
			if em&entHasType != 0 {
				e.Type = &de.typ
			}
			if em&entHasData != 0 {
				e.Data = d.bytesAlias()
			}
			m.Entries[i] = e
		}
	}
	if mask&hasSnapshot != 0 {
		snap := d.bytesAlias()
		if d.err != nil {
			return nil
		}
		m.Snapshot = &raftpb.Snapshot{}
		if err := proto.Unmarshal(snap, m.Snapshot); err != nil {
			d.fail(fmt.Errorf("wire: raft snapshot: %w", err))
			return nil
		}
	}
	if d.err != nil {
		return nil
	}
	v.r.M = m
	return &v.r
}
