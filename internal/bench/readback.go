package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hybridkv/hybridkv/client"
)

// readBackInFlight bounds the final reads in flight at once.
const readBackInFlight = 256

// readBack reads, strongly and after the load has drained, every key the
// run wrote, with the reads recorded in the history. A write acknowledged
// and then lost, which no later operation happened to read, then still
// shows: the final read of its key returns something older (S1).
func (r *run) readBack(ctx context.Context) string {
	keys := r.writtenKeys()
	if len(keys) == 0 || len(r.clients) == 0 {
		return ""
	}
	c := r.clients[0].c
	sessions := make([]*client.Session, 16)
	for i := range sessions {
		sessions[i] = c.NewSession()
	}
	slots := make(chan struct{}, readBackInFlight)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i, key := range keys {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return fmt.Sprintf("final read-back interrupted: %v", ctx.Err())
		}
		wg.Add(1)
		sessions[i%len(sessions)].Submit(client.Get, key, nil, client.Strong, func(res client.Result) {
			if res.Err != nil {
				failed.Add(1)
			}
			<-slots
			wg.Done()
		})
	}
	wg.Wait()
	return fmt.Sprintf("final read-back: %d written keys read strongly after the run, %d failed", len(keys), failed.Load())
}

func (r *run) writtenKeys() []string {
	all := make(map[string]struct{})
	for _, d := range r.drivers() {
		d.mu.Lock()
		maps.Copy(all, d.written)
		d.mu.Unlock()
	}
	return slices.Sorted(maps.Keys(all))
}
