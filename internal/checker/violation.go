package checker

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Violation is one breach of a guarantee.
type Violation struct {
	// Property is the guarantee broken: "S1", "W1".."W6", "C1".."C3", "E1"
	// or "X1".
	Property string
	// Ops are the operations involved. When a read is listed, so is the
	// write it read from, if there is one, so the report can name it.
	Ops    []Op
	Detail string // what is wrong; names the bad pattern where there is one
}

// Op is an operation a violation involves: an event of the history, or
// one sub-operation of a transaction's event.
type Op struct {
	// Event is the operation. For a sub-operation it is that operation as
	// one of a single key: a get, put or delete of Txn's key, with the
	// value read or written, and the transaction's identity, level,
	// times, outcome and slot.
	history.Event
	// Txn is the transaction as recorded, for a sub-operation; nil
	// otherwise. Part names the compare or the operation of its program
	// the sub-operation comes from: "then[1]", "else[0]", "compare[0]".
	Txn  *history.Event
	Part string
}

// Name names the operation in a report: its identity, and for a
// sub-operation of a transaction, "txn" before it and its Part after it
// ("txn 5.3 then[1]"); for one key a scan read, "scan" before it ("scan
// 5.3": a scan is one range read).
func (o *Op) Name() string {
	if o.Txn == nil {
		return o.ID().String()
	}
	return subName(o.Txn, o.Part)
}

func subName(txn *history.Event, at any) string {
	if txn.Kind == wire.Scan {
		return fmt.Sprintf("scan %v", txn.ID())
	}
	return fmt.Sprintf("txn %v %v", txn.ID(), at)
}

// programName names a transaction or a scan: "txn 5.3", "scan 5.3".
func programName(e *history.Event) string { return fmt.Sprintf("%v %v", e.Kind, e.ID()) }

// plain lists events that are operations of their own.
func plain(evs ...*history.Event) []Op {
	ops := make([]Op, len(evs))
	for i, e := range evs {
		ops[i] = Op{Event: *e}
	}
	return ops
}

var propertyNames = map[string]string{
	"S1": "linearizability",
	"W1": "read-your-writes",
	"W2": "monotonic reads",
	"W3": "monotonic writes",
	"W4": "writes-follow-reads",
	"W5": "causal visibility",
	"W6": "no thin-air values",
	"C1": "same-session read-from",
	"C2": "same-session causal delivery",
	"C3": "cross-session visibility barrier",
	"E1": "convergence",
	"X1": "exactly once",
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s", v.Property, propertyNames[v.Property], v.Detail)
	for i := range v.Ops {
		b.WriteString("\n  ")
		b.WriteString(describe(&v.Ops[i], v.Ops))
	}
	return b.String()
}

// describe renders an operation; a value is named by the listed write
// that wrote it, since the checker does not assume any value encoding.
func describe(o *Op, ops []Op) string {
	var b strings.Builder
	e := &o.Event
	fmt.Fprintf(&b, "%s %v %v", o.Name(), e.Level, e.Kind)
	if e.Kind != wire.Txn || e.Key != "" {
		fmt.Fprintf(&b, " key %q", e.Key)
	}
	switch {
	case e.Kind == wire.Get && e.Outcome != history.OK:
	case e.Kind == wire.Get && !e.Found:
		b.WriteString(" -> not found")
	case e.Kind == wire.Get:
		b.WriteString(" -> " + valueName(e, ops))
	case e.Kind == wire.Txn:
		b.WriteString(" " + txnSummary(e))
	case e.Kind == wire.Scan:
		b.WriteString(" " + scanSummary(e))
	}
	fmt.Fprintf(&b, " [%v", time.Duration(e.Invoke))
	if e.Outcome == history.OK {
		fmt.Fprintf(&b, ", %v]", time.Duration(e.Return))
	} else {
		fmt.Fprintf(&b, ", %v]", e.Outcome)
	}
	if e.Slot != 0 {
		fmt.Fprintf(&b, " slot %d", e.Slot)
	}
	return b.String()
}

// txnSummary says what a transaction's program holds and which branch
// ran.
func txnSummary(e *history.Event) string {
	t, r, err := e.Txn()
	if err != nil {
		return "(" + err.Error() + ")"
	}
	s := fmt.Sprintf("(%d compares, then %d ops, else %d ops)", len(t.Compares), len(t.Then), len(t.Else))
	switch {
	case r == nil:
	case r.Succeeded:
		s += " -> then"
	default:
		s += " -> else"
	}
	return s
}

// scanSummary says what range a scan read and how many keys it returned.
func scanSummary(e *history.Event) string {
	t, r, err := e.Txn()
	if err != nil {
		return "(" + err.Error() + ")"
	}
	read := &t.Then[0]
	s := fmt.Sprintf("to %q", read.End)
	if read.Limit > 0 {
		s += fmt.Sprintf(" limit %d", read.Limit)
	}
	if r != nil {
		s += fmt.Sprintf(" -> %d keys", len(r.Results[0].KVs))
	}
	return s
}

func valueName(r *history.Event, ops []Op) string {
	for i := range ops {
		w := &ops[i]
		if w.Kind == wire.Put && w.Key == r.Key && bytes.Equal(w.Value, r.Value) {
			return "value of " + w.Name()
		}
	}
	return shortValue(r.Value)
}
