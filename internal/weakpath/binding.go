package weakpath

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Clock is what a Binding asks of its client: the time in ticks, and
// whether a replica has been heard from since a given tick.
type Clock interface {
	Now() uint64
	HeardSince(r wire.NodeID, tick uint64) bool
	RetryTicks() int
}

// Binding is the replica a client sends its weak reads to: the closest one,
// unless it has gone silent. A read that waits at its replica for its floor
// is not a silence: the replica answers everything else meanwhile. So the
// client moves on to the next replica only when the bound one has sent
// nothing for missLimit retry periods while a weak request was being
// retried, and it moves back to the closest replica as soon as that one is
// heard from again. The sessions' floors keep their reads monotonic across
// the moves.
type Binding struct {
	closest, replica wire.NodeID
	// misses counts retry periods of silence; lastMiss is when the last
	// one was counted.
	misses   int
	lastMiss uint64
}

// missLimit is how many retry periods a bound replica may stay silent.
const missLimit = 2

// NewBinding binds to the closest replica.
func NewBinding(closest wire.NodeID) Binding { return Binding{closest: closest, replica: closest} }

// Replica returns the bound replica.
func (b *Binding) Replica() wire.NodeID { return b.replica }

// Answered notes that the bound replica answered a weak request.
func (b *Binding) Answered(from wire.NodeID) {
	if from == b.replica {
		b.misses = 0
	}
}

// Missed notes that a weak request is being retried, and rebinds to the
// next replica of replicas once the bound one has been silent for
// missLimit retry periods.
func (b *Binding) Missed(c Clock, replicas []wire.NodeID) {
	period := uint64(c.RetryTicks())
	now := c.Now()
	if now < period || c.HeardSince(b.replica, now-period) {
		b.misses = 0
		return
	}
	if b.misses > 0 && now-b.lastMiss < period {
		return // this period's silence is counted already
	}
	b.misses++
	b.lastMiss = now
	if b.misses < missLimit || len(replicas) < 2 {
		return
	}
	b.misses = 0
	i := slices.Index(replicas, b.replica)
	b.replica = replicas[(i+1)%len(replicas)]
}

// Tick moves back to the closest replica once it is heard from again.
func (b *Binding) Tick(c Clock) {
	period := uint64(c.RetryTicks())
	now := c.Now()
	if b.replica != b.closest && now >= period && c.HeardSince(b.closest, now-period) {
		b.replica, b.misses = b.closest, 0
	}
}
