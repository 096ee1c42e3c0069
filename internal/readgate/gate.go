package readgate

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/kvstore"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Log is what the read gate asks of its replica's log.
type Log interface {
	// AppliedIndex is the index of the last applied entry.
	AppliedIndex() uint64
	// Committed is the highest index known committed.
	Committed() uint64
	// Term is the term of the entry at index, if the log holds it.
	Term(index uint64) (uint64, bool)
}

// Verdict is what a replica may do with a weak read now.
type Verdict uint8

const (
	// Wait: the replica does not reflect the read's floor yet.
	Wait Verdict = iota
	// Serve: the applied value of the read's key is at least as new as
	// every write to it in the session's causal past.
	Serve
	// Lost: another entry was committed where the session's speculative
	// position stood; the operation was replayed elsewhere and only the
	// leader can tell where (see Escalate).
	Lost
)

// Gate gates weak reads on their floor (Request.MinApplied and
// Request.SpecFloor) and holds, in arrival order, those that must wait.
//
// A read may be served once the applied state reached the floor, or
// earlier once the log reaches it with no write to the read's key between
// the applied state and the floor: the applied value is then the value as
// of the floor. For the committed floor "the log reaches it" means the
// commit index does (an uncommitted suffix may yet be replaced); for the
// speculative position it means the log holds that very entry. A
// transaction counts as a write to every key: which keys it writes depends
// on its program and on the state it runs on.
type Gate struct {
	// lastAppended is the highest index seen appended.
	lastAppended uint64
	// writes holds, per key, the indexes of logged writes not yet applied.
	writes map[string][]uint64
	// txns holds the indexes of logged transactions not yet applied: a
	// transaction may write any key, whatever its operation's key.
	txns   []uint64
	parked []parkedRead
	// parkedIDs holds the parked reads' identities, so that a retry is
	// not parked twice without a look at every parked read.
	parkedIDs map[wire.OpID]struct{}
	// appends counts Appended calls; released is the log's progress when
	// the parked reads were last checked (see Release).
	appends  uint64
	released progress
}

// progress is what a parked read's verdict can change with: the applied
// and commit indexes and the entries appended.
type progress struct{ applied, committed, appends uint64 }

type parkedRead struct {
	from wire.NodeID
	req  *wire.Request
}

// New returns an empty gate.
func New() *Gate {
	return &Gate{writes: make(map[string][]uint64), parkedIDs: make(map[wire.OpID]struct{})}
}

// Appended notes an entry added to the log. An index at or below the last
// one means a new leader replaced the log's tail: the replaced writes go.
func (t *Gate) Appended(index uint64, op *wire.Op) {
	t.appends++
	if index <= t.lastAppended {
		for k, slots := range t.writes {
			t.writes[k] = truncate(slots, index)
		}
		t.txns = truncate(t.txns, index)
	}
	t.lastAppended = index
	switch {
	case op.Kind == wire.Txn:
		t.txns = append(t.txns, index)
	case op.Kind.IsWrite():
		t.writes[op.Key] = append(t.writes[op.Key], index)
	}
}

// truncate drops the indexes from index on.
func truncate(slots []uint64, index uint64) []uint64 {
	if i := slices.IndexFunc(slots, func(s uint64) bool { return s >= index }); i >= 0 {
		return slots[:i]
	}
	return slots
}

// Applied notes an applied entry.
func (t *Gate) Applied(index uint64, op *wire.Op) {
	if op.Kind == wire.Txn {
		// Indexes are appended in order; any at or below an applied one
		// (a snapshot skipped its Applied) no longer matters.
		i := 0
		for i < len(t.txns) && t.txns[i] <= index {
			i++
		}
		t.txns = slices.Delete(t.txns, 0, i)
		return
	}
	if !op.Kind.IsWrite() {
		return
	}
	slots := t.writes[op.Key]
	if i := slices.Index(slots, index); i >= 0 {
		slots = slices.Delete(slots, i, i+1)
	}
	if len(slots) == 0 {
		delete(t.writes, op.Key)
	} else {
		t.writes[op.Key] = slots
	}
}

// Check says what may be done with req now.
func (t *Gate) Check(log Log, req *wire.Request) Verdict {
	applied := log.AppliedIndex()
	op := &req.Op
	if c := req.MinApplied; c > applied && (log.Committed() < c || !t.seen(log, c) || t.writeBetween(op, applied, c)) {
		return Wait
	}
	spec := req.SpecFloor
	switch {
	case spec.IsZero():
		return Serve
	case t.holds(log, spec):
		if t.writeBetween(op, applied, spec.Index) {
			return Wait
		}
		return Serve
	case spec.Index <= log.Committed() && t.seen(log, spec.Index):
		// Committed with another term, or compacted past knowing: the
		// speculation is not what the log holds there.
		return Lost
	case t.supersededBefore(log, spec):
		return Lost
	}
	return Wait
}

// SpecSettled reports whether req's speculative floor is settled here: the
// applied state holds the log up to that very entry, or the gate finds it
// lost (Check answers Lost). Either way nothing logged before the floor is
// still to come: it is applied, or the read goes to the leader.
func (t *Gate) SpecSettled(log Log, req *wire.Request) bool {
	spec := req.SpecFloor
	if spec.IsZero() {
		return false
	}
	if spec.Index <= log.AppliedIndex() && t.holds(log, spec) {
		return true
	}
	return t.Check(log, req) == Lost
}

// holds reports whether the log holds the entry at pos, and the gate has
// seen it appended (the log may hold entries a step has yet to report).
func (t *Gate) holds(log Log, pos wire.Position) bool {
	term, ok := log.Term(pos.Index)
	return ok && term == pos.Term && t.seen(log, pos.Index)
}

// supersededBefore reports whether the log committed, before pos, an
// entry of a later term than pos's. A log's terms only grow, so no log can
// ever hold pos: the speculation was replayed elsewhere. Without this a read
// whose speculating leader had run ahead of what the cluster ever logged
// would wait for the log to reach pos's index, which it may never do.
func (t *Gate) supersededBefore(log Log, pos wire.Position) bool {
	c := log.Committed()
	if c == 0 || c >= pos.Index || !t.seen(log, c) {
		return false
	}
	term, ok := log.Term(c)
	return ok && term > pos.Term
}

// seen reports whether the gate has seen the log up to index: appended
// (the log may hold entries a step has yet to report), or applied. Only
// operations' entries are reported appended; the applied index covers the
// rest, which carry no write: a leader's empty entry, clock entries, and
// entries a restart or a snapshot brought in already applied. Without it a
// replica that saw no operation appended since its restart, or since it
// caught up by snapshot, never saw a lost speculative floor as lost, and
// the read, re-sent to it, waited for good.
func (t *Gate) seen(log Log, index uint64) bool {
	return index <= t.lastAppended || index <= log.AppliedIndex()
}

// writeBetween reports whether a logged, unapplied write to a key read
// reads, or a transaction, lies in (lo, hi]. A scan reads the keys of its
// range: every key with unapplied writes is looked at, which are few (the
// applied state trails the log by a round or so) next to a range's keys.
func (t *Gate) writeBetween(read *wire.Op, lo, hi uint64) bool {
	if between(t.txns, lo, hi) {
		return true
	}
	if read.Kind != wire.Scan {
		return between(t.writes[read.Key], lo, hi)
	}
	r, ok := wire.ScanRead(read)
	for key, slots := range t.writes {
		if (!ok || r.Covers(key)) && between(slots, lo, hi) {
			return true
		}
	}
	return false
}

// between reports whether one of slots lies in (lo, hi].
func between(slots []uint64, lo, hi uint64) bool {
	for _, s := range slots {
		if s > lo && s <= hi {
			return true
		}
	}
	return false
}

// Serve hands req to answer with a verdict other than Wait now if it has
// one, else parks it.
func (t *Gate) Serve(log Log, from wire.NodeID, req *wire.Request, answer func(wire.NodeID, *wire.Request, Verdict)) {
	if v := t.Check(log, req); v != Wait {
		answer(from, req, v)
		return
	}
	if _, dup := t.parkedIDs[req.Op.ID]; !dup {
		t.parkedIDs[req.Op.ID] = struct{}{}
		t.parked = append(t.parked, parkedRead{from, req})
	}
}

// Parked counts the reads waiting for their floor.
func (t *Gate) Parked() int { return len(t.parked) }

// Release hands answer, in arrival order, the parked reads that no longer
// wait. It looks at every parked read, so it does nothing while the log has
// not moved since the last time: each read was checked against that state
// when it was last released or parked.
func (t *Gate) Release(log Log, answer func(wire.NodeID, *wire.Request, Verdict)) {
	if len(t.parked) == 0 {
		return
	}
	now := progress{log.AppliedIndex(), log.Committed(), t.appends}
	if now == t.released {
		return
	}
	t.released = now
	type decided struct {
		parkedRead
		v Verdict
	}
	var ready []decided
	kept := t.parked[:0]
	for _, r := range t.parked {
		if v := t.Check(log, r.req); v != Wait {
			delete(t.parkedIDs, r.req.Op.ID)
			ready = append(ready, decided{r, v})
		} else {
			kept = append(kept, r)
		}
	}
	clear(t.parked[len(kept):])
	t.parked = kept
	for _, r := range ready {
		answer(r.from, r.req, r.v)
	}
}

// Answer is the reply to a weak read the gate let go with verdict v: lost,
// or the key's value in st's applied state with its slot and the applied
// index (a scan's keys, with the applied index for slot: see ScanAnswer).
// Both rest on the applied state and the commit index alone, so neither
// waits for the round's write.
func Answer(st *kvstore.Store, req *wire.Request, v Verdict) *wire.Reply {
	if v == Lost {
		return wire.LostReply(req.Op.ID)
	}
	if req.Op.Kind == wire.Scan {
		read, ok := wire.ScanRead(&req.Op)
		var r wire.TxnOpResult
		if ok {
			r = st.Scan(&read)
		}
		return ScanAnswer(st, req.Op.ID, ok, &r)
	}
	val, found := st.Read(req.Op.Key)
	return &wire.Reply{Kind: wire.ReplyWeak, ID: req.Op.ID, Ok: true,
		Found: found, Value: val.Value, Revision: val.Revision(), Slot: val.Slot, Applied: st.Applied()}
}

// ScanAnswer is the reply to a weak scan that found r in st's applied
// state (not ok: a malformed scan, answered as the log answers one: not
// found, no value). Its slot is the applied index: the state it read
// includes every write it returned.
func ScanAnswer(st *kvstore.Store, id wire.OpID, ok bool, r *wire.TxnOpResult) *wire.Reply {
	rep := &wire.Reply{Kind: wire.ReplyWeak, ID: id, Ok: true, Slot: st.Applied(), Applied: st.Applied()}
	if ok {
		rep.Found, rep.Value = true, wire.AppendScanResult(nil, r)
	}
	return rep
}

// MetricParkedReads names the weak reads a gate holds (see
// protocol.Measure).
const MetricParkedReads = "curp_parked_reads"

// ParkedReads is the gate's metric of n parked reads.
func ParkedReads(n int) protocol.Measure {
	return protocol.Measure{Name: MetricParkedReads, Value: float64(n),
		Help: "Weak reads waiting for this replica to reach their causal floor."}
}
