package stats

import (
	"fmt"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Class is the kind of operation a latency belongs to. The four classes are
// reported separately because their latencies differ by orders of
// magnitude: a weak read may be answered locally while a strong write
// crosses the wide area at least once.
type Class int

// The classes, in report order.
const (
	StrongWrite Class = iota
	StrongRead
	WeakWrite
	WeakRead
	numClasses
)

// classes lists every class in report order.
var classes = [numClasses]Class{StrongWrite, StrongRead, WeakWrite, WeakRead}

// Classes returns every class in report order, indexed by its value.
func Classes() []Class { return classes[:] }

// ClassOf classifies an operation by its consistency level and kind.
func ClassOf(level wire.Level, kind wire.OpKind) Class {
	write := kind.IsWrite()
	switch {
	case level == wire.Weak && write:
		return WeakWrite
	case level == wire.Weak:
		return WeakRead
	case write:
		return StrongWrite
	default:
		return StrongRead
	}
}

// IsStrong reports whether the class holds strong operations.
func (c Class) IsStrong() bool { return c == StrongWrite || c == StrongRead }

func (c Class) String() string {
	switch c {
	case StrongWrite:
		return "strong-write"
	case StrongRead:
		return "strong-read"
	case WeakWrite:
		return "weak-write"
	case WeakRead:
		return "weak-read"
	}
	return fmt.Sprintf("class(%d)", int(c))
}
