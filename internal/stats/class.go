package stats

import (
	"fmt"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Class is the kind of operation a latency belongs to. The classes are
// reported separately because their latencies differ by orders of
// magnitude: a weak read may be answered locally while a strong write
// crosses the wide area at least once, and a scan of hundreds of keys
// costs more than a read of one wherever it runs.
type Class int

// The classes, in report order: strong before weak, and within a level
// writes, reads, scans.
const (
	StrongWrite Class = iota
	StrongRead
	StrongScan
	WeakWrite
	WeakRead
	WeakScan
	numClasses
)

// classes lists every class in report order.
var classes = [numClasses]Class{StrongWrite, StrongRead, StrongScan, WeakWrite, WeakRead, WeakScan}

// Classes returns every class in report order, indexed by its value.
func Classes() []Class { return classes[:] }

// ClassOf classifies an operation by its consistency level and kind.
func ClassOf(level wire.Level, kind wire.OpKind) Class {
	weak := level == wire.Weak
	switch {
	case kind == wire.Scan && weak:
		return WeakScan
	case kind == wire.Scan:
		return StrongScan
	case kind.IsWrite() && weak:
		return WeakWrite
	case weak:
		return WeakRead
	case kind.IsWrite():
		return StrongWrite
	default:
		return StrongRead
	}
}

// IsStrong reports whether the class holds strong operations.
func (c Class) IsStrong() bool { return c == StrongWrite || c == StrongRead || c == StrongScan }

// IsScan reports whether the class holds scans: only runs of a mix with
// scans have them, so reports show them only when there were some.
func (c Class) IsScan() bool { return c == StrongScan || c == WeakScan }

func (c Class) String() string {
	switch c {
	case StrongWrite:
		return "strong-write"
	case StrongRead:
		return "strong-read"
	case StrongScan:
		return "strong-scan"
	case WeakWrite:
		return "weak-write"
	case WeakRead:
		return "weak-read"
	case WeakScan:
		return "weak-scan"
	}
	return fmt.Sprintf("class(%d)", int(c))
}
