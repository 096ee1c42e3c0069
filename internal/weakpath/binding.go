package weakpath

import (
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Binding is the replica a client sends its weak reads to: the closest one,
// until it stops answering. Then the client moves on to the next replica
// (the sessions' floors keep their reads monotonic across the move).
type Binding struct {
	replica wire.NodeID
	misses  int
}

// missLimit is how many retry periods a bound replica may stay silent.
const missLimit = 2

// NewBinding binds to replica.
func NewBinding(replica wire.NodeID) Binding { return Binding{replica: replica} }

// Replica returns the bound replica.
func (b *Binding) Replica() wire.NodeID { return b.replica }

// Answered notes that the bound replica answered.
func (b *Binding) Answered(from wire.NodeID) {
	if from == b.replica {
		b.misses = 0
	}
}

// Missed notes a retry period without an answer, and rebinds to the next
// replica of replicas once the bound one has been silent too long.
func (b *Binding) Missed(replicas []wire.NodeID) {
	b.misses++
	if b.misses < missLimit || len(replicas) < 2 {
		return
	}
	b.misses = 0
	i := slices.Index(replicas, b.replica)
	b.replica = replicas[(i+1)%len(replicas)]
}
