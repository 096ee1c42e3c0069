package history

import (
	"errors"
	"sync"
)

// spillQueue is how many full chunks may wait for the file: beyond it,
// recording waits for the disk rather than memory growing without bound.
const spillQueue = 4

// spill writes a spilling recorder's chunks to its file, on a goroutine of
// its own, so that no session waits while a chunk is encoded.
type spill struct {
	w      *Writer
	chunks chan []Event
	done   chan error
	taken  int  // events handed to chunks (under the recorder's mu)
	closed bool // Close was called (under the recorder's mu)
	// sending counts the chunks taken off under mu and not yet handed
	// to chunks: Close waits for them before it closes chunks.
	sending sync.WaitGroup
}

func (sp *spill) run() {
	var err error
	for c := range sp.chunks {
		for i := range c {
			if err == nil {
				err = sp.w.Event(&c[i])
			}
		}
	}
	sp.done <- err
}

// appendSpilling adds e to the chunk being filled and returns that chunk
// if e filled it, for the caller to hand to the writer once it has let go
// of mu. Values are not shared as Append shares them: the events go to
// the file, not memory.
func (r *Recorder) appendSpilling(e Event) []Event {
	if r.spill.closed {
		panic("history: Append after Close")
	}
	if len(r.events) == 0 {
		r.events = append(r.events, make([]Event, 0, chunkEvents))
	}
	r.events[0] = append(r.events[0], e)
	if len(r.events[0]) < chunkEvents {
		return nil
	}
	full := r.events[0]
	r.events = r.events[:0]
	r.spill.taken += len(full)
	r.spill.sending.Add(1)
	return full
}

// Close writes what a spilling recorder still holds (the last events,
// the replicas' states, the faults) and the file's end, and stops its
// writer; it reports the first error writing met. It does not close the
// underlying writer. Nothing may be recorded after it.
func (r *Recorder) Close() error {
	r.mu.Lock()
	sp := r.spill
	if sp == nil {
		r.mu.Unlock()
		return errors.New("history: Close on a recorder that holds its events in memory")
	}
	if sp.closed {
		r.mu.Unlock()
		return errors.New("history: Close called twice")
	}
	sp.closed = true
	var last []Event
	if len(r.events) > 0 {
		last = r.events[0]
		sp.taken += len(last)
	}
	r.events = nil
	replicas, faults := r.replicas, r.faults
	r.mu.Unlock()
	if len(last) > 0 {
		sp.chunks <- last
	}
	sp.sending.Wait()
	close(sp.chunks)
	err := <-sp.done
	for _, s := range replicas {
		if err == nil {
			err = sp.w.Replica(s)
		}
	}
	for _, d := range faults {
		if err == nil {
			err = sp.w.Fault(d)
		}
	}
	if err == nil {
		err = sp.w.Close()
	}
	return err
}

// mustHold panics for a spilling recorder, whose events are in its file.
func (r *Recorder) mustHold(what string) {
	if r.spill != nil {
		panic("history: " + what + " on a recorder that spills to a file: Close it and read the file")
	}
}
