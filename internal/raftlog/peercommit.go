package raftlog

import (
	"bytes"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/quorum"
	"go.etcd.io/raft/v3/raftpb"
)

// Followers learn that entries committed from each other, not only from
// the leader. A follower's acknowledgement of the leader's entries goes, as
// a copy marked with peerAckContext, to every other voter too. An entry of
// the current term T that a majority acknowledged in term T (a follower's
// own write counting once durable) is committed: it is Raft's commit rule,
// only counted by a follower. The follower hands the index to its raft as a
// heartbeat of the leader carrying it, whose answer is dropped.
//
// Without it a follower learns of a commit one hop after the leader does:
// a follower in another site hears it about one one-way delay after the
// other followers' acknowledgements could have told it, and every read a
// follower serves from its applied state after a write waits for that.

// peerAckContext marks a follower's acknowledgement copied to another
// follower, and the heartbeat that hands raft what the copies showed.
var peerAckContext = []byte("peer-ack")

// peerAcks is what one follower knows of the voters' durable logs in its
// current term.
type peerAcks struct {
	self   uint64
	voters quorum.MajorityConfig
	term   uint64
	// written is, per voter, the highest index known durable in its log and
	// equal to term's leader's log up to there.
	written map[uint64]uint64
	// changed is set when written grew since the last commitIndex.
	changed bool
}

func newPeerAcks(self uint64, voters []uint64) *peerAcks {
	p := &peerAcks{self: self, voters: make(quorum.MajorityConfig, len(voters)),
		written: make(map[uint64]uint64, len(voters))}
	for _, id := range voters {
		p.voters[id] = struct{}{}
	}
	return p
}

// note records that voter wrote the leader's log of term up to index.
func (p *peerAcks) note(voter, term, index uint64) {
	if _, ok := p.voters[voter]; !ok || term < p.term {
		return
	}
	if term > p.term {
		p.term = term
		clear(p.written)
	}
	if index > p.written[voter] {
		p.written[voter] = index
		p.changed = true
	}
}

// wroteOwn records what a write of this replica made durable: its log up to
// index, whose entry there has logTerm, in term. Only entries of the term
// count: they are that term's leader's, and so is the log before them.
func (p *peerAcks) wroteOwn(term, index, logTerm uint64) {
	if index > 0 && logTerm == term {
		p.note(p.self, term, index)
	}
}

// commitIndex returns the highest index a majority wrote in the current
// term, with that term, if it changed since the last call; 0 otherwise. The
// count is raft's own, the one its leader commits by.
func (p *peerAcks) commitIndex() (term, index uint64) {
	if !p.changed {
		return 0, 0
	}
	p.changed = false
	return p.term, uint64(p.voters.CommittedIndex(p))
}

// AckedIndex implements quorum.AckedIndexer.
func (p *peerAcks) AckedIndex(voter uint64) (quorum.Index, bool) {
	i, ok := p.written[voter]
	return quorum.Index(i), ok
}

// isPeerAck reports whether m is another follower's copied acknowledgement.
func isPeerAck(m *raftpb.Message) bool {
	return m.GetType() == raftpb.MessageType_MsgAppResp && bytes.Equal(m.GetContext(), peerAckContext)
}

// isPeerAckAnswer reports whether m is raft's answer to the heartbeat that
// handed it a commit index learned from the peers.
func isPeerAckAnswer(m *raftpb.Message) bool {
	return m.GetType() == raftpb.MessageType_MsgHeartbeatResp && bytes.Equal(m.GetContext(), peerAckContext)
}

// copyAck sends this follower's acknowledgement of the leader's entries to
// the other voters, once the write it acknowledges is durable.
func (l *Log) copyAck(resp *raftpb.Message) {
	if resp.GetType() != raftpb.MessageType_MsgAppResp || resp.GetReject() {
		return
	}
	for _, id := range l.cfg.Peers {
		if id == l.cfg.ID || id == resp.GetTo() {
			continue
		}
		l.emit(Event{Kind: SendAfterWrite, Msg: &raftpb.Message{
			Type:    raftpb.MessageType_MsgAppResp.Enum(),
			From:    new(l.cfg.ID),
			To:      new(id),
			Term:    new(resp.GetTerm()),
			Index:   new(resp.GetIndex()),
			Context: peerAckContext,
		}})
	}
}

// learnCommit hands raft an index the voters' acknowledgements show
// committed, if this replica follows a leader in that term and its log
// holds the entry the majority wrote.
func (l *Log) learnCommit() error {
	term, index := l.acks.commitIndex()
	if index == 0 {
		return nil
	}
	st := l.rn.BasicStatus()
	if st.RaftState != raft.StateFollower || st.Lead == 0 || st.GetTerm() != term || index <= st.GetCommit() {
		return nil
	}
	if t, ok := l.Term(index); !ok || t != term {
		return nil
	}
	return l.rn.Step(&raftpb.Message{
		Type:    raftpb.MessageType_MsgHeartbeat.Enum(),
		From:    new(st.Lead),
		To:      new(l.cfg.ID),
		Term:    new(term),
		Commit:  new(index),
		Context: peerAckContext,
	})
}
