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
	Ops    []history.Event
	Detail string // what is wrong; names the bad pattern where there is one
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

// describe renders an event; a value is named by the listed write that
// wrote it, since the checker does not assume any value encoding.
func describe(e *history.Event, ops []history.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %v %v key %q", e.ID(), e.Level, e.Kind, e.Key)
	switch {
	case e.Kind == wire.Get && e.Outcome != history.OK:
	case e.Kind == wire.Get && !e.Found:
		b.WriteString(" -> not found")
	case e.Kind == wire.Get:
		b.WriteString(" -> " + valueName(e, ops))
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

func valueName(r *history.Event, ops []history.Event) string {
	for i := range ops {
		w := &ops[i]
		if w.Kind == wire.Put && w.Key == r.Key && bytes.Equal(w.Value, r.Value) {
			return "value of " + w.ID().String()
		}
	}
	const show = 16
	v := r.Value
	if len(v) > show {
		return fmt.Sprintf("value %x… (%d bytes)", v[:show], len(v))
	}
	return fmt.Sprintf("value %x", v)
}
