package smr

import (
	"bytes"
	"fmt"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// entries keeps each log entry this replica appended, decoded, until it is
// applied, so that an entry is decoded once per replica: on a follower
// when appended, on the leader not at all (its proposals are kept as they
// were before encoding, and matched in order to the entries the log
// appends).
// Entries the log held before a restart, or replaced, are decoded when
// applied.
type entries struct {
	// appended holds the decoded entries in index order.
	appended []decodedEntry
	// proposals holds, in proposal order, what this leader encoded and
	// proposed and the log has not reported appended yet.
	proposals []proposal
	// decodedRequests counts the requests decoded from the log.
	decodedRequests uint64
}

type decodedEntry struct {
	index uint64
	msg   wire.Message
}

type proposal struct {
	data []byte
	req  *wire.Request
}

// propose notes the encoding of a request proposed to the log; req is
// kept as it is now.
func (e *entries) propose(data []byte, req *wire.Request) {
	kept := *req
	e.proposals = append(e.proposals, proposal{data, &kept})
}

// dropProposals forgets the proposals not appended yet (the log refused
// them: this replica no longer leads).
func (e *entries) dropProposals() {
	clear(e.proposals)
	e.proposals = e.proposals[:0]
}

// append decodes the entry appended at index, or takes the proposal it
// was encoded from, keeps it and returns it. An index at or below the last
// one kept replaced those entries.
func (e *entries) append(id wire.NodeID, index uint64, data []byte) wire.Message {
	e.truncate(index)
	m := e.fromProposal(data)
	if m == nil {
		m = e.decode(id, index, data)
	}
	e.appended = append(e.appended, decodedEntry{index, m})
	return m
}

// fromProposal returns the request data was encoded from, if this replica
// proposed it, dropping the proposals before it, which the log did not
// append. Raft copies what it is proposed, so the entry is matched by its
// bytes: comparing them costs a fraction of decoding them.
func (e *entries) fromProposal(data []byte) wire.Message {
	if len(data) == 0 {
		return nil
	}
	for i, p := range e.proposals {
		if bytes.Equal(p.data, data) {
			clear(e.proposals[:i+1])
			e.proposals = e.proposals[i+1:]
			return p.req
		}
	}
	return nil
}

// apply returns the entry at index, decoded, and forgets it and any before.
func (e *entries) apply(id wire.NodeID, index uint64, data []byte) wire.Message {
	n := 0
	for n < len(e.appended) && e.appended[n].index < index {
		n++
	}
	var m wire.Message
	if n < len(e.appended) && e.appended[n].index == index {
		m = e.appended[n].msg
		n++
	}
	clear(e.appended[:n])
	e.appended = e.appended[n:]
	if m == nil {
		m = e.decode(id, index, data)
	}
	return m
}

func (e *entries) decode(id wire.NodeID, index uint64, data []byte) wire.Message {
	m := decodeEntry(id, index, data)
	if _, ok := m.(*wire.Request); ok {
		e.decodedRequests++
	}
	return m
}

// truncate forgets the entries from index on (replaced in the log).
func (e *entries) truncate(index uint64) {
	n := len(e.appended)
	for n > 0 && e.appended[n-1].index >= index {
		n--
	}
	clear(e.appended[n:])
	e.appended = e.appended[:n]
}

// restore forgets every entry up to index: a snapshot replaced them.
func (e *entries) restore(index uint64) {
	n := 0
	for n < len(e.appended) && e.appended[n].index <= index {
		n++
	}
	clear(e.appended[:n])
	e.appended = e.appended[n:]
}

// decodeEntry decodes a log entry: a request or a clock entry.
func decodeEntry(id wire.NodeID, index uint64, data []byte) wire.Message {
	m, err := wire.Decode(data)
	if err == nil {
		switch m.(type) {
		case *wire.Request, *wire.Clock:
			return m
		}
		err = fmt.Errorf("holds a %v", m.Type())
	}
	// Entries are written by this program's leaders only.
	panic(fmt.Sprintf("replica %d: log entry %d: %v", id, index, err))
}
