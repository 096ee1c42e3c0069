package runtime

import (
	"sync"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Inbound is one received message.
type Inbound struct {
	From wire.NodeID
	Msg  wire.Message
}

// Inbox collects messages from many reader goroutines for one consumer.
// Producers append under a mutex and post a wake-up if none is pending; the
// consumer swaps the whole batch out, so the cost per message is one append.
type Inbox struct {
	mu    sync.Mutex
	items []Inbound
	spare []Inbound
	wake  chan struct{}
}

// NewInbox returns an empty inbox.
func NewInbox() *Inbox { return &Inbox{wake: make(chan struct{}, 1)} }

// Put queues a message; safe for concurrent use.
func (b *Inbox) Put(from wire.NodeID, m wire.Message) {
	b.mu.Lock()
	b.items = append(b.items, Inbound{from, m})
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Wake is signalled after Put.
func (b *Inbox) Wake() <-chan struct{} { return b.wake }

// Take returns everything queued; the slice is valid until the next Take.
func (b *Inbox) Take() []Inbound {
	b.mu.Lock()
	items := b.items
	clear(b.spare)
	b.items = b.spare[:0]
	b.mu.Unlock()
	b.spare = items
	return items
}

// Len counts the messages queued; safe for concurrent use.
func (b *Inbox) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items)
}

// Notify wakes the consumer without a message, for work queued elsewhere.
func (b *Inbox) Notify() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
