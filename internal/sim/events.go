package sim

import (
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

type eventKind uint8

const (
	evDeliver eventKind = iota
	evTick
	evFlush
	evCall
	// evWritten: a replica's disk finished its write.
	evWritten
	// evRound: a node runs a round on the messages it has received.
	evRound
)

type event struct {
	at      time.Duration
	seq     uint64 // ties broken by scheduling order: deterministic
	kind    eventKind
	node    wire.NodeID
	gen     int
	from    wire.NodeID
	payload []byte
	call    func()
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
