package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Crash is a replica crash a run injects: SIGKILL, then optionally a
// restart from the replica's data directory.
type Crash struct {
	// Target is "leader", "follower" or "all". A leaderless protocol's
	// leader is the replica at the first client's site (see victims).
	Target string
	// After is the time from the start of the run to the kill.
	After time.Duration
	// RestartAfter, when positive, restarts the killed replicas this long
	// after the kill.
	RestartAfter time.Duration
}

// CrashTargets are the accepted Crash.Target values.
var CrashTargets = []string{"leader", "follower", "all"}

// outage measures what a crash costs the clients: the time from the kill
// to the completion of the first strong write invoked after it.
type outage struct {
	mu          sync.Mutex
	what        string // the replicas killed
	killedAt    time.Time
	restartedAt time.Time
	firstOK     time.Time
	err         error
}

func (o *outage) killed(what string, at time.Time, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.what, o.killedAt, o.err = what, at, err
}

func (o *outage) restarted(at time.Time, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.restartedAt = at
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("restart: %w", err)
	}
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
		return []string{fmt.Sprintf("crash of %s failed: %v", o.what, o.err)}
	case o.killedAt.IsZero():
		return nil
	}
	note := fmt.Sprintf("killed %s at +%.1fs", o.what, o.killedAt.Sub(start).Seconds())
	if !o.restartedAt.IsZero() {
		note += fmt.Sprintf(", restarted from disk at +%.1fs", o.restartedAt.Sub(start).Seconds())
	}
	if o.firstOK.IsZero() {
		return []string{note + "; no strong write invoked after the kill completed"}
	}
	return []string{fmt.Sprintf("%s; first strong write invoked after the kill completed %.0f ms later",
		note, float64(o.firstOK.Sub(o.killedAt).Microseconds())/1e3)}
}

// crashAt kills c.Target at start+c.After and restarts it if asked; the
// returned stop waits for a restart under way.
func (r *run) crashAt(ctx context.Context, start time.Time, c Crash) (stop func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	timer := time.AfterFunc(time.Until(start.Add(c.After)), func() {
		defer wg.Done()
		victims, err := r.victims(ctx, c.Target)
		what := describeVictims(c.Target, victims)
		if err != nil {
			r.outage.killed(what, time.Now(), err)
			return
		}
		for _, id := range victims {
			r.procs.Proc(id).Kill()
		}
		killedAt := time.Now()
		r.outage.killed(what, killedAt, nil)
		r.fault("SIGKILL " + what)
		// The crash is also a fault of the run's fault log, so the report
		// carries its unavailability per client site and the throughput
		// timeline around it.
		fault := r.faults.inject("kill", "SIGKILL "+what, killedAt, r.sites())
		r.faults.logf("inject kill        SIGKILL %s", what)
		if c.RestartAfter <= 0 || !sleepUntil(ctx, time.Now().Add(c.RestartAfter)) {
			return
		}
		if err := r.procs.RestartAll(ctx, victims); err != nil {
			r.outage.restarted(time.Now(), err)
			return
		}
		restartedAt := time.Now()
		r.outage.restarted(restartedAt, nil)
		r.fault("restarted " + what + " from disk")
		r.faults.healed(fault, restartedAt)
		r.faults.logf("healed kill        restarted %s from disk", what)
	})
	return func() {
		if timer.Stop() {
			wg.Done()
		}
		wg.Wait()
	}
}

// victimsWait bounds how long a crash waits for a replica to be its target:
// a "leader" crash due while there is none (an election under way, a slow
// disk holding every replica back) waits for one rather than hitting
// nothing.
const victimsWait = 15 * time.Second

// victims picks the replicas a crash kills, waiting up to victimsWait for
// the target to exist: at the crash's moment the replicas may name no
// leader, or a leader that has just died (once on a machine whose disk
// stalled for 0.9 s; a run then tested no crash at all).
func (r *run) victims(ctx context.Context, target string) ([]uint64, error) {
	deadline := time.Now().Add(victimsWait)
	for {
		ids, leader := r.pickVictims(ctx, target)
		if len(ids) > 0 {
			return ids, nil
		}
		if time.Now().After(deadline) || !sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			return nil, fmt.Errorf("no running replica is the %s after %v (client believes %d leads)",
				target, victimsWait, leader)
		}
	}
}

// pickVictims picks the replicas a crash kills now, if any. The leader is
// the one the replicas name (see leader): a client's belief alone may be
// empty for a moment, while it looks for the leader again after a retry.
// A leaderless protocol's "leader" is the replica at the first client's
// site: it leads that client's commands, which must go elsewhere while it
// is down.
func (r *run) pickVictims(ctx context.Context, target string) (ids []uint64, leader uint64) {
	switch {
	case r.proto.Leaderless:
		leader = r.replicaAt(r.clients[0].site)
	case target != "all":
		leader = r.leader(ctx)
	}
	for _, p := range r.procs.List() {
		if !p.Running() {
			continue
		}
		switch {
		case target == "all",
			target == "leader" && p.ID == leader,
			target == "follower" && p.ID != leader && len(ids) == 0:
			ids = append(ids, p.ID)
		}
	}
	return ids, leader
}

// replicaAt returns the first replica at site, 0 if none is.
func (r *run) replicaAt(site string) uint64 {
	for _, rep := range r.cfg.Replicas {
		if rep.Site == site {
			return rep.ID
		}
	}
	return 0
}

func describeVictims(target string, ids []uint64) string {
	if target == "all" {
		return "all replicas"
	}
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprint(id))
	}
	return fmt.Sprintf("%s replica %s", target, strings.Join(s, ","))
}

func (r *run) fault(what string) {
	if r.history != nil {
		r.history.rec.AddFault(what)
	}
}
