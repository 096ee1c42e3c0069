package bench

import (
	"fmt"
	"sync"
	"time"
)

// outage measures what a leader kill costs the clients: the time from the
// kill to the completion of the first strong write invoked after it.
type outage struct {
	mu       sync.Mutex
	victim   uint64
	killedAt time.Time
	firstOK  time.Time
	err      error
}

func (o *outage) killed(victim uint64, at time.Time, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.victim, o.killedAt, o.err = victim, at, err
}

// strongWrite notes a successful strong write invoked at start.
func (o *outage) strongWrite(start, done time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.killedAt.IsZero() || start.Before(o.killedAt) {
		return
	}
	if o.firstOK.IsZero() || done.Before(o.firstOK) {
		o.firstOK = done
	}
}

func (o *outage) notes(start time.Time) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.err != nil:
		return []string{fmt.Sprintf("leader kill failed: %v", o.err)}
	case o.killedAt.IsZero():
		return nil
	case o.firstOK.IsZero():
		return []string{fmt.Sprintf("killed leader replica %d at +%.1fs; no strong write invoked after it completed",
			o.victim, o.killedAt.Sub(start).Seconds())}
	}
	return []string{fmt.Sprintf("killed leader replica %d at +%.1fs; first strong write invoked after the kill completed %.0f ms later",
		o.victim, o.killedAt.Sub(start).Seconds(), float64(o.firstOK.Sub(o.killedAt).Microseconds())/1e3)}
}

// killLeaderAt SIGKILLs the replica the first client believes leads, at t.
func (r *run) killLeaderAt(t time.Time) (stop func()) {
	timer := time.AfterFunc(time.Until(t), func() {
		leader := r.clients[0].c.Leader()
		for _, p := range r.procs.Procs {
			if p.ID == leader {
				p.Kill()
				r.outage.killed(leader, time.Now(), nil)
				if r.history != nil {
					r.history.AddFault(fmt.Sprintf("SIGKILL leader replica %d", leader))
				}
				return
			}
		}
		r.outage.killed(leader, time.Now(), fmt.Errorf("no running replica is the leader (client believes %d)", leader))
	})
	return func() { timer.Stop() }
}
