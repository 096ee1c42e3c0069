package history

import (
	"io"
	"slices"
	"sync"
	"time"
)

// Recorder collects the events of one client process. It is safe for
// concurrent use. A single mutex is enough: appending is a few tens of
// nanoseconds while an operation takes at least a network round trip, so
// even hundreds of sessions at the seeds' peak rates leave it idle almost
// all the time; per-session buffers would add an API for no gain.
type Recorder struct {
	start time.Time

	mu sync.Mutex
	// events are kept in chunks of chunkEvents: appended to one slice,
	// every growth past its capacity copied the whole history while
	// every session waited on mu. Ten checked minutes at 95 % weak
	// recorded 35 million events, and the clients stood still for seconds
	// at each growth (0 operations in 12 of the 600 seconds, 503
	// operations timed out, the longest wait 19.5 s).
	events   [][]Event
	replicas []ReplicaState
	faults   []string
	// values holds the first copy of each value recorded, by its hash:
	// every read that returns a value shares that copy instead of keeping
	// the one its reply brought. Reads are most of a run's events, so
	// this is most of a long checked run's memory: ten minutes at 100,000
	// operations a second with 100-byte values outgrew 24 GiB.
	values *interner

	// spill, for a recorder made by NewSpillingRecorder, takes each full
	// chunk to the goroutine that writes it to the file.
	spill *spill
}

// NewRecorder returns a recorder whose clock starts now.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), values: newInterner()}
}

// NewSpillingRecorder returns a recorder whose clock starts now and that
// writes its events to w as a history file as they accumulate, keeping
// only the chunk being filled and those waiting to be written in memory.
// A checked run of ten minutes records tens of millions of events: held
// in memory they grew the client process's heap to its limit, and its
// garbage collection took the processor from the replicas in the run's
// later minutes. Close finishes the file; Take and File are not for such
// a recorder.
func NewSpillingRecorder(w io.Writer) (*Recorder, error) {
	hw, err := NewWriter(w)
	if err != nil {
		return nil, err
	}
	sp := &spill{w: hw, chunks: make(chan []Event, spillQueue), done: make(chan error, 1)}
	go sp.run()
	return &Recorder{start: time.Now(), spill: sp}, nil
}

// Now returns the nanoseconds elapsed since the recorder was created, on
// the monotonic clock, for Event.Invoke and Event.Return.
func (r *Recorder) Now() int64 { return int64(time.Since(r.start)) }

// Append records an event. The recorder keeps e.Value and e.Result: the
// caller must not modify them afterwards.
func (r *Recorder) Append(e Event) {
	r.mu.Lock()
	if r.spill != nil {
		full := r.appendSpilling(e)
		r.mu.Unlock()
		if full != nil {
			r.spill.chunks <- full
			r.spill.sending.Done()
		}
		return
	}
	e.Value = r.values.share(e.Value)
	if n := len(r.events); n == 0 || len(r.events[n-1]) == chunkEvents {
		r.events = append(r.events, make([]Event, 0, chunkEvents))
	}
	last := &r.events[len(r.events)-1]
	*last = append(*last, e)
	r.mu.Unlock()
}

// chunkEvents is how many events a chunk of a recorder's history holds:
// 6.5 MB of them.
const chunkEvents = 1 << 16

// AddReplica records a replica's final state.
func (r *Recorder) AddReplica(s ReplicaState) {
	r.mu.Lock()
	r.replicas = append(r.replicas, s)
	r.mu.Unlock()
}

// AddFault records a description of an injected fault.
func (r *Recorder) AddFault(desc string) {
	r.mu.Lock()
	r.faults = append(r.faults, desc)
	r.mu.Unlock()
}

// Len returns the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lenLocked()
}

func (r *Recorder) lenLocked() int {
	n := 0
	if r.spill != nil {
		n = r.spill.taken
	}
	if len(r.events) == 0 {
		return n
	}
	return n + (len(r.events)-1)*chunkEvents + len(r.events[len(r.events)-1])
}

// joined returns the events in one slice, dropping each chunk once
// copied when drop is set, so that the collector may take it while the
// rest are copied.
func (r *Recorder) joined(drop bool) []Event {
	all := make([]Event, 0, r.lenLocked())
	for i, c := range r.events {
		all = append(all, c...)
		if drop {
			r.events[i] = nil
		}
	}
	return all
}

// Take returns everything recorded and empties the recorder. A long
// run's history is too big to hold twice: its chunks are let go as they
// are joined.
func (r *Recorder) Take() *File {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mustHold("Take")
	f := &File{Events: r.joined(true), Replicas: r.replicas, Faults: r.faults}
	r.events, r.replicas, r.faults = nil, nil, nil
	clear(r.values.copies)
	return f
}

// File returns a copy of everything recorded so far. Values are shared,
// not copied.
func (r *Recorder) File() *File {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mustHold("File")
	return &File{
		Events:   r.joined(false),
		Replicas: slices.Clone(r.replicas),
		Faults:   slices.Clone(r.faults),
	}
}
