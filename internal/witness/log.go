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
// record to its Log, and the witness answers once the Log is synced: its
// replica's driver syncs it with the round's raft write, on a real disk in
// parallel with the raft log's own sync.
//
// Removals are not logged: a restarted replica drops the loaded records of
// operations it has applied, and Rewrite bounds what stale records cost.
// The session table forgets the operations of expired sessions, so the
// replica rewrites its Log with the pooled records before each snapshot
// of its state: a restart then loads no record of an operation the
// snapshot it starts from applied, but those still pooled.
//
// A leader's own records are the exception: each operation it pools, it
// appends to its raft log in the same round, and the round's raft write
// keeps it as well as a record would. So a leader marks the term it leads
// (Lead) and pools its operations without logging them (Pool.AddInLog); a
// restart rebuilds those records from the unapplied raft log entries of
// the terms marked. Before such an entry leaves the raft log unapplied
// (overwritten by a later leader, or replaced by a snapshot) its record is
// logged here, synced ahead of the raft write that drops the entry.
type Log interface {
	// Load returns the records in the order they were appended.
	Load() ([]Entry, error)
	// Append queues a record; it is durable after the next Sync.
	Append(op *wire.Op, prevWeak uint64)
	// Lead queues a mark that this replica leads term: from here on, the
	// records of the operations it logs in that term are its raft log's
	// entries of that term.
	Lead(term uint64)
	// Pending reports whether records were appended that no Sync has
	// taken yet.
	Pending() bool
	// Sync makes every appended record durable. It may run on another
	// goroutine than Append, Pending and Rewrite (a driver's writer).
	Sync() error
	// Rewrite replaces the log's content with entries, atomically and
	// durably, queued records included.
	Rewrite(entries []Entry) error
	// Bytes is the log's size, for deciding when to Rewrite.
	Bytes() int64
}

// Entry is one logged record: an operation and the session's weak write
// before it; or, when Lead is set, the mark that this replica led term
// Lead from there on (Log.Lead).
type Entry struct {
	Op       wire.Op
	PrevWeak uint64
	Lead     uint64
}

// MemLog is a Log in memory, for the simulator and tests: what was synced
// survives the simulated crash of its replica, as a synced file would, and
// Crash drops the rest.
type MemLog struct {
	mu      sync.Mutex
	ops     []Entry
	pending []Entry
	bytes   int64
}

var _ Log = (*MemLog)(nil)

// Load implements Log.
func (l *MemLog) Load() ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.ops...), nil
}

// Append implements Log.
func (l *MemLog) Append(op *wire.Op, prevWeak uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := *op
	c.Value = append([]byte(nil), op.Value...)
	l.pending = append(l.pending, Entry{Op: c, PrevWeak: prevWeak})
}

// Lead implements Log.
func (l *MemLog) Lead(term uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, Entry{Lead: term})
}

// Pending implements Log.
func (l *MemLog) Pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending) > 0
}

// Sync implements Log.
func (l *MemLog) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.pending {
		l.ops = append(l.ops, e)
		l.bytes += int64(len(e.Op.Key)+len(e.Op.Value)) + 24 // about an encoded record
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
func (l *MemLog) Rewrite(entries []Entry) error {
	l.mu.Lock()
	l.ops, l.pending, l.bytes = nil, nil, 0
	l.mu.Unlock()
	for i := range entries {
		if e := &entries[i]; e.Lead != 0 {
			l.Lead(e.Lead)
		} else {
			l.Append(&e.Op, e.PrevWeak)
		}
	}
	return l.Sync()
}

// Bytes implements Log.
func (l *MemLog) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}
