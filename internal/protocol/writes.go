package protocol

import (
	"sync"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// WriteQueue holds a replica's rounds whose writes are not done yet, for a
// driver to keep Ready's rules: the core's loop adds rounds (Add), and a
// writer takes the waiting ones, does their writes with one sync and
// delivers what waited for them (Take, then Done). It is safe for one adder
// and one writer on different goroutines.
type WriteQueue struct {
	mu     sync.Mutex
	rounds []queuedRound
	// taken is how many rounds at the front a writer is working on.
	taken int
	// added counts the rounds added, queued or not: a round's number.
	added uint64
}

type queuedRound struct {
	write Write
	after []wire.Envelope
	round uint64
}

// Add queues a round's Write and After; rounds are numbered from 1 in the
// order added. It returns After itself, for the caller to deliver now,
// when the round has no write and no earlier one is waiting; nil
// otherwise.
func (q *WriteQueue) Add(rd Ready) []wire.Envelope {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.added++
	if rd.Write == nil && len(q.rounds) == 0 {
		return rd.After
	}
	if rd.Write == nil && len(rd.After) == 0 {
		return nil
	}
	q.rounds = append(q.rounds, queuedRound{rd.Write, rd.After, q.added})
	return nil
}

// Len counts the rounds waiting, those being written included.
func (q *WriteQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.rounds)
}

// Batch is the rounds a writer took: their writes folded into one, and
// what waited for them, in order.
type Batch struct {
	// Write is nil when none of the rounds had one.
	Write Write
	After []wire.Envelope
	n     int
	// last is the number of the batch's last round.
	last uint64
}

// Take hands a writer every waiting round it has not taken; ok is false
// when there are none. The rounds stay in the queue, so later rounds keep
// waiting behind them, until Done.
func (q *WriteQueue) Take() (b Batch, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, r := range q.rounds[q.taken:] {
		switch {
		case r.write == nil:
		case b.Write == nil:
			b.Write = r.write
		default:
			b.Write.Merge(r.write)
		}
		b.After = append(b.After, r.after...)
		b.n++
		b.last = r.round
	}
	q.taken += b.n
	return b, b.n > 0
}

// Done removes a batch's rounds once its write is done and what waited for
// it was delivered.
func (q *WriteQueue) Done(b Batch) {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.rounds[:b.n])
	q.rounds = q.rounds[b.n:]
	q.taken -= b.n
}

// Clear forgets every round, as a crash does.
func (q *WriteQueue) Clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.rounds)
	q.rounds, q.taken = nil, 0
}
