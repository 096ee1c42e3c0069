package round

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
// consumer takes what is queued in one swap, so the cost per message is one
// append. Replicas' messages and clients' are queued apart, so that a
// consumer can take every replica's message but only some of the clients'
// (TakeUpTo): raft's heartbeats and votes must not wait behind a flood of
// client requests. Each sender's messages keep their order.
type Inbox struct {
	mu    sync.Mutex
	peers []Inbound
	// clients[head:] are the clients' messages not taken yet.
	clients []Inbound
	head    int
	// out is what the last Take returned, reused by the next.
	out  []Inbound
	wake chan struct{}
}

// NewInbox returns an empty inbox.
func NewInbox() *Inbox { return &Inbox{wake: make(chan struct{}, 1)} }

// Put queues a message; safe for concurrent use.
func (b *Inbox) Put(from wire.NodeID, m wire.Message) {
	b.mu.Lock()
	if from >= wire.FirstClientID {
		b.clients = append(b.clients, Inbound{from, m})
	} else {
		b.peers = append(b.peers, Inbound{from, m})
	}
	b.mu.Unlock()
	b.Notify()
}

// Wake is signalled after Put.
func (b *Inbox) Wake() <-chan struct{} { return b.wake }

// Take returns everything queued, replicas' messages first; the slice is
// valid until the next Take.
func (b *Inbox) Take() []Inbound { return b.TakeUpTo(-1) }

// TakeUpTo returns every replica's message queued and at most maxClients of
// the clients' (all of them if maxClients is negative); the slice is valid
// until the next Take. Clients' messages left behind stay queued and the
// wake-up is posted again, so the consumer comes back for them.
func (b *Inbox) TakeUpTo(maxClients int) []Inbound {
	clear(b.out)
	out := b.out[:0]
	b.mu.Lock()
	out = append(out, b.peers...)
	clear(b.peers)
	b.peers = b.peers[:0]
	n := len(b.clients) - b.head
	if maxClients >= 0 && n > maxClients {
		n = maxClients
	}
	out = append(out, b.clients[b.head:b.head+n]...)
	b.head += n
	left := len(b.clients) - b.head
	switch {
	case left == 0:
		clear(b.clients)
		b.clients, b.head = b.clients[:0], 0
	case b.head > len(b.clients)/2:
		// Reuse the front once most of the queue was taken.
		copy(b.clients, b.clients[b.head:])
		clear(b.clients[left:])
		b.clients, b.head = b.clients[:left], 0
	}
	b.mu.Unlock()
	b.out = out
	if left > 0 {
		b.Notify()
	}
	return out
}

// Len counts the messages queued; safe for concurrent use.
func (b *Inbox) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.peers) + len(b.clients) - b.head
}

// Notify wakes the consumer without a message, for work queued elsewhere.
func (b *Inbox) Notify() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
