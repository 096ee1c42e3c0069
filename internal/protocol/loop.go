package protocol

import (
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/internal/round"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Loop is a replica's round, the same for every driver: package node's
// process loop and the simulator both run their replicas through it, and
// differ only in when rounds happen (a driver runs one whenever something
// happened: messages arrived, a tick, the batch timer fired, a write
// became durable) and in how their writer does a write.
type Loop struct {
	Core   Replica
	Inbox  *round.Inbox
	Limits round.Limits
	// BatchDelay is how long the first request of a batch may wait for
	// others before the batch is proposed; 0 proposes at the end of the
	// round that took it.
	BatchDelay time.Duration
	// Self is the replica's id: what the core addresses to it is raft's
	// news that a write is durable, handed back through the Inbox.
	Self wire.NodeID
	// Send puts envelopes on the network, done with them when it returns.
	// It is called from the round and from the writer (Written).
	Send func([]wire.Envelope)
	// Writes holds the rounds whose writes are not done yet.
	Writes WriteQueue
	// armed: the driver's batch timer runs.
	armed bool
	// written is the number of the last round whose write is done, every
	// earlier round's included; set by the writer (Written).
	written atomic.Uint64
}

// WriteWatcher is a core that wants to know which of its rounds' writes
// are durable: a reply that vouches for what an earlier round wrote need
// not wait for the current round's write.
type WriteWatcher interface {
	// WritesDone tells the core that the writes of its rounds up to round,
	// counted from 1 by its Ready calls, are durable. Round only grows.
	WritesDone(round uint64)
}

// Event is what woke a round besides the inbox.
type Event struct {
	// Ticks is how many of the core's ticks passed.
	Ticks int
	// BatchDue: the batch timer fired.
	BatchDue bool
}

// Round tells a WriteWatcher core which rounds' writes are done, ticks
// the core, proposes its batch if the batch timer fired,
// steps the round's messages (round.Take), applies the batching rule,
// and hands out what the core produced by Ready's rules: Messages go out
// at once, the Write and After join Writes (After goes out at once when
// no write waits), and the core advances. arm tells the driver to start
// its batch timer for BatchDelay; writing, that rounds wait for its
// writer.
func (r *Loop) Round(ev Event, spent func() bool) (arm, writing bool) {
	if w, ok := r.Core.(WriteWatcher); ok {
		w.WritesDone(r.written.Load())
	}
	for range ev.Ticks {
		r.Core.Tick()
	}
	if ev.BatchDue {
		r.armed = false
		r.Core.Flush()
	}
	round.Take(r.Inbox, r.Limits, spent, r.Core.Step)
	if r.Core.Pending() {
		switch {
		case r.BatchDelay <= 0:
			r.Core.Flush()
		case !r.armed:
			r.armed, arm = true, true
		}
	}
	rd := r.Core.Ready()
	r.Send(rd.Messages)
	if now := r.Writes.Add(rd); now != nil {
		r.deliver(now)
	}
	r.Core.Advance()
	return arm, r.Writes.Len() > 0
}

// Written delivers what waited for batch b once the driver's writer has
// done its write, and drops b's rounds from Writes. It does not touch
// the core, so a writer may call it while a round runs: the next round
// tells a WriteWatcher core.
func (r *Loop) Written(b Batch) {
	r.deliver(b.After)
	r.Writes.Done(b)
	r.written.Store(b.last)
}

// deliver sends envelopes that waited for a write, in order; those to the
// replica itself go back to its Inbox, for the core's next round.
func (r *Loop) deliver(envs []wire.Envelope) {
	start := 0
	for i := range envs {
		if envs[i].To == r.Self {
			r.Send(envs[start:i])
			r.Inbox.Put(r.Self, envs[i].Msg)
			start = i + 1
		}
	}
	r.Send(envs[start:])
}
