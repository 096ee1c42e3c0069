package history

import (
	"bytes"
	"hash/maphash"
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

	mu       sync.Mutex
	events   []Event
	replicas []ReplicaState
	faults   []string
	// values holds the first copy of each value recorded, by its hash:
	// every read that returns a value shares that copy instead of keeping
	// the one its reply brought. Reads are most of a run's events, so
	// this is most of a long checked run's memory: ten minutes at 100,000
	// operations a second with 100-byte values outgrew 24 GiB.
	values map[uint64][]byte
	seed   maphash.Seed
}

// NewRecorder returns a recorder whose clock starts now.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), values: make(map[uint64][]byte), seed: maphash.MakeSeed()}
}

// Now returns the nanoseconds elapsed since the recorder was created, on
// the monotonic clock, for Event.Invoke and Event.Return.
func (r *Recorder) Now() int64 { return int64(time.Since(r.start)) }

// Append records an event. The recorder keeps e.Value: the caller must not
// modify it afterwards.
func (r *Recorder) Append(e Event) {
	r.mu.Lock()
	if len(e.Value) > 0 {
		h := maphash.Bytes(r.seed, e.Value)
		switch v, ok := r.values[h]; {
		case !ok:
			r.values[h] = e.Value
		case bytes.Equal(v, e.Value):
			e.Value = v
		}
	}
	r.events = append(r.events, e)
	r.mu.Unlock()
}

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
	return len(r.events)
}

// Take returns everything recorded and empties the recorder, without the
// copy File makes: a long run's history is too big to hold twice.
func (r *Recorder) Take() *File {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &File{Events: r.events, Replicas: r.replicas, Faults: r.faults}
	r.events, r.replicas, r.faults = nil, nil, nil
	clear(r.values)
	return f
}

// File returns a copy of everything recorded so far. Values are shared,
// not copied.
func (r *Recorder) File() *File {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &File{
		Events:   slices.Clone(r.events),
		Replicas: slices.Clone(r.replicas),
		Faults:   slices.Clone(r.faults),
	}
}
