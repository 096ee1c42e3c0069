package witness

import (
	"sync"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Log keeps a witness's records across restarts. A witness's ok promises
// that the operation will be found in recovery; a record kept only in
// memory breaks that promise when the replica restarts, and when every
// replica restarts at once (a power cut) nothing could recover the
// operations that completed on the fast path. So a witness appends its new
// records to its Log, which makes them durable, before it answers.
//
// Removals are not logged: a restarted replica drops the loaded records of
// operations it has applied, and Rewrite bounds what stale records cost.
type Log interface {
	// Load returns the records in the order they were appended.
	Load() ([]wire.Op, error)
	// Append makes ops durable before it returns (one sync for the call).
	Append(ops []wire.Op) error
	// Rewrite replaces the log's content with ops, atomically.
	Rewrite(ops []wire.Op) error
	// Bytes is the log's size, for deciding when to Rewrite.
	Bytes() int64
}

// MemLog is a Log in memory, for the simulator and tests: it survives the
// simulated crash of its replica, as a synced file would.
type MemLog struct {
	mu    sync.Mutex
	ops   []wire.Op
	bytes int64
}

var _ Log = (*MemLog)(nil)

// Load implements Log.
func (l *MemLog) Load() ([]wire.Op, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wire.Op(nil), l.ops...), nil
}

// Append implements Log.
func (l *MemLog) Append(ops []wire.Op) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, op := range ops {
		op.Value = append([]byte(nil), op.Value...)
		l.ops = append(l.ops, op)
		l.bytes += int64(len(op.Value)) + 24 // about an encoded op
	}
	return nil
}

// Rewrite implements Log.
func (l *MemLog) Rewrite(ops []wire.Op) error {
	l.mu.Lock()
	l.ops, l.bytes = nil, 0
	l.mu.Unlock()
	return l.Append(ops)
}

// Bytes implements Log.
func (l *MemLog) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}
