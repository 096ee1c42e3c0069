package history

import (
	"fmt"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Outcome is what a client learned about an operation.
type Outcome uint8

const (
	// Unknown: no reply arrived (timeout, crash, end of run). The zero value,
	// so an event whose outcome was never set is treated cautiously.
	Unknown Outcome = iota
	// OK: the operation completed and its result is recorded.
	OK
	// Failed: an error was returned. The operation may still have taken
	// effect (the error may have come after the leader logged it), so for
	// checking it is the same as Unknown.
	Failed

	maxOutcome = Failed
)

func (o Outcome) String() string {
	switch o {
	case Unknown:
		return "unknown"
	case OK:
		return "ok"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Event is one operation as a client saw it.
type Event struct {
	Session uint64
	Seq     uint64
	Level   wire.Level
	Kind    wire.OpKind
	Key     string
	// Value is the value a put wrote, or the value a get returned when
	// Found; a delete writes none (it makes the key absent). Within one
	// key, every put must write a distinct value, the puts of transactions
	// included: that is how a read is matched to the write it observed.
	//
	// For a transaction (Kind wire.Txn) it is the program, an encoded
	// wire.Transaction (wire.AppendTxn), and Key is whatever the client
	// put in the operation's key.
	Value []byte
	// Result is a transaction's answer, an encoded wire.TxnResult
	// (wire.AppendTxnResult), when its Outcome is OK. It is empty for
	// every other event.
	Result []byte
	Found  bool // a get found a value
	// Invoke and Return are monotonic nanoseconds since the run started.
	// Return is 0 unless Outcome is OK.
	Invoke  int64
	Return  int64
	Outcome Outcome
	// Slot is a log position the protocol reported, 0 when it reported
	// none. For a put it is the slot the write was logged at. For a get it
	// is the log position of the state the answer came from (the serving
	// replica's applied index, or the read's own slot when it went through
	// the log), so a get that observed a write has Slot >= the write's.
	Slot uint64
}

// ID returns the operation's identity.
func (e *Event) ID() wire.OpID { return wire.OpID{Session: e.Session, Seq: e.Seq} }

// IsWrite reports whether the event is a put or a delete.
func (e *Event) IsWrite() bool { return e.Kind.IsWrite() }

// Valid reports why the event's fields are out of range, or nil. A
// transaction's Value must decode as a valid program and, when its Outcome
// is OK, its Result as an answer with one result per operation of the
// branch that ran; a transaction without a result has no Result.
func (e *Event) Valid() error {
	switch {
	case e.Level > wire.Weak:
		return fmt.Errorf("event %v: bad level %d", e.ID(), e.Level)
	case !e.Kind.Valid():
		return fmt.Errorf("event %v: bad kind %d", e.ID(), e.Kind)
	case e.Kind == wire.Delete && (len(e.Value) > 0 || e.Found):
		return fmt.Errorf("event %v: a delete with a value", e.ID())
	case e.Outcome > maxOutcome:
		return fmt.Errorf("event %v: bad outcome %d", e.ID(), e.Outcome)
	case e.Outcome == OK && e.Return < e.Invoke:
		return fmt.Errorf("event %v: returned at %d before it was invoked at %d", e.ID(), e.Return, e.Invoke)
	case !e.Kind.HasProgram() && len(e.Result) > 0:
		return fmt.Errorf("event %v: a %v with a transaction result", e.ID(), e.Kind)
	case e.Kind.HasProgram():
		_, _, err := e.Txn()
		return err
	}
	return nil
}

// Txn decodes a transaction's program and, when its Outcome is OK, its
// answer (nil otherwise), and checks that they fit together: the answer
// has one result per operation of the branch it says ran.
func (e *Event) Txn() (*wire.Transaction, *wire.TxnResult, error) {
	if !e.Kind.HasProgram() {
		return nil, nil, fmt.Errorf("event %v: a %v is not a transaction", e.ID(), e.Kind)
	}
	if _, ok := wire.ScanRead(&wire.Op{Kind: e.Kind, Key: e.Key, Value: e.Value}); e.Kind == wire.Scan && !ok {
		return nil, nil, fmt.Errorf("event %v: a scan whose program is not one range read of its key", e.ID())
	}
	if e.Found {
		return nil, nil, fmt.Errorf("event %v: a transaction marked found", e.ID())
	}
	t, err := wire.DecodeTxn(e.Value)
	if err != nil {
		return nil, nil, fmt.Errorf("event %v: program: %w", e.ID(), err)
	}
	if e.Outcome != OK {
		if len(e.Result) > 0 {
			return nil, nil, fmt.Errorf("event %v: a transaction with outcome %v and a result", e.ID(), e.Outcome)
		}
		return t, nil, nil
	}
	r, err := wire.DecodeTxnResult(e.Result)
	if err != nil {
		return nil, nil, fmt.Errorf("event %v: result: %w", e.ID(), err)
	}
	branch, name := t.Then, "then"
	if !r.Succeeded {
		branch, name = t.Else, "else"
	}
	if len(r.Results) != len(branch) {
		return nil, nil, fmt.Errorf("event %v: %d results for the %d operations of the %s branch",
			e.ID(), len(r.Results), len(branch), name)
	}
	return t, r, nil
}

// ReplicaState is a replica's applied state at the end of a run: equal
// Applied indexes must come with equal Digests.
type ReplicaState struct {
	ID      uint64
	Applied uint64
	Digest  uint64
}

// File is everything a run records.
type File struct {
	Events   []Event
	Replicas []ReplicaState
	Faults   []string // faults injected during the run, in order, for the reader
	// Log is the committed log's entries from raftlog.FirstEntry on (each
	// an encoded wire.Request, or empty for raft's own), when the run can
	// see it (the simulator): X1 is then also checked against what the
	// replicas applied. It is not written to history files.
	Log [][]byte
}
