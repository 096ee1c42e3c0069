package witness

import (
	"sync"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Log keeps a witness's records across restarts. A witness's ok promises
// that the operation will be found in recovery; a record kept only in
// memory breaks that promise when the replica restarts, and when every
// replica restarts at once (a power cut) nothing could recover the
// operations that completed on the fast path. So a pool appends every new
// record to its Log, and the witness syncs the Log before it answers: once
// per round, and on a replica's real disk in parallel with the raft log's
// own sync.
//
// Removals are not logged: a restarted replica drops the loaded records of
// operations it has applied, and Rewrite bounds what stale records cost.
type Log interface {
	// Load returns the records in the order they were appended.
	Load() ([]wire.Op, error)
	// Append queues a record; it is durable after the next Sync.
	Append(op *wire.Op)
	// Sync makes every appended record durable.
	Sync() error
	// Rewrite replaces the log's content with ops, atomically and
	// durably, queued records included.
	Rewrite(ops []wire.Op) error
	// Bytes is the log's size, for deciding when to Rewrite.
	Bytes() int64
}

// MemLog is a Log in memory, for the simulator and tests: what was synced
// survives the simulated crash of its replica, as a synced file would, and
// Crash drops the rest.
type MemLog struct {
	mu      sync.Mutex
	ops     []wire.Op
	pending []wire.Op
	bytes   int64
}

var _ Log = (*MemLog)(nil)

// Load implements Log.
func (l *MemLog) Load() ([]wire.Op, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wire.Op(nil), l.ops...), nil
}

// Append implements Log.
func (l *MemLog) Append(op *wire.Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := *op
	c.Value = append([]byte(nil), op.Value...)
	l.pending = append(l.pending, c)
}

// Sync implements Log.
func (l *MemLog) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, op := range l.pending {
		l.ops = append(l.ops, op)
		l.bytes += int64(len(op.Value)) + 24 // about an encoded op
	}
	l.pending = l.pending[:0]
	return nil
}

// Crash drops the records not synced yet.
func (l *MemLog) Crash() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = nil
}

// Rewrite implements Log.
func (l *MemLog) Rewrite(ops []wire.Op) error {
	l.mu.Lock()
	l.ops, l.pending, l.bytes = nil, nil, 0
	l.mu.Unlock()
	for i := range ops {
		l.Append(&ops[i])
	}
	return l.Sync()
}

// Bytes implements Log.
func (l *MemLog) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}
