package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hybridkv/hybridkv/internal/transport"
)

// runNemesis injects steps, each at its offset from start and healed after
// its length. The returned stop heals the fault in force, if any, injects
// no more, and waits.
func (r *run) runNemesis(ctx context.Context, start time.Time, steps []faultStep) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, s := range steps {
			if !r.waitNemesis(ctx, quit, start.Add(s.at)) {
				return
			}
			what, heal, err := r.inject(ctx, &s)
			at := time.Now()
			if err != nil {
				r.faults.fail(fmt.Errorf("inject %s: %w", s.kind, err))
			}
			r.faults.logf("inject %-11s %s", s.kind, what)
			r.fault(s.kind + ": " + what)
			i := r.faults.inject(s.kind, what, at, r.sites())
			// The heal runs even when the run is stopping: the cluster
			// must end healed for the read-back and convergence check.
			r.waitNemesis(ctx, quit, at.Add(s.length))
			if err := heal(); err != nil {
				r.faults.fail(fmt.Errorf("heal %s (%s): %w", s.kind, what, err))
			}
			r.faults.healed(i, time.Now())
			r.faults.logf("healed %-11s (%s)", s.kind, what)
		}
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}

// waitNemesis sleeps until t and reports whether the nemesis goes on.
func (r *run) waitNemesis(ctx context.Context, quit <-chan struct{}, t time.Time) bool {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-quit:
	case <-ctx.Done():
	}
	return false
}

// sites are the client sites, in client order.
func (r *run) sites() []string {
	var s []string
	for _, bc := range r.clients {
		s = append(s, bc.site)
	}
	return s
}

func (r *run) replicaIDs() []uint64 {
	var ids []uint64
	for _, rep := range r.cfg.Replicas {
		ids = append(ids, rep.ID)
	}
	return ids
}

// inject starts one fault and returns what it did and how to heal it. On
// error, heal undoes whatever part was done.
func (r *run) inject(ctx context.Context, s *faultStep) (what string, heal func() error, err error) {
	ids := r.replicaIDs()
	leader := r.leader(ctx)
	target, role := r.target(s, ids, leader)
	others := slices.DeleteFunc(slices.Clone(ids), func(id uint64) bool { return id == target })
	healRules := func(nodes []uint64, cutClients bool) func() error {
		return func() error {
			var errs []error
			for _, id := range nodes {
				errs = append(errs, r.procs.Proc(id).ClearFaults(ctx))
			}
			if cutClients {
				for _, bc := range r.clients {
					bc.c.Faults().Clear()
				}
			}
			return errors.Join(errs...)
		}
	}
	setRules := func(id uint64, rules ...transport.Rule) error {
		return r.procs.Proc(id).SetFaults(ctx, transport.RuleSet{Rules: rules, Seed: s.pick})
	}
	switch s.kind + "/" + s.variant {
	case "kill/":
		r.procs.Proc(target).Kill()
		return fmt.Sprintf("SIGKILL %s replica %d", role, target), func() error { return r.procs.Restart(ctx, target) }, nil
	case "pause/":
		p := r.procs.Proc(target)
		return fmt.Sprintf("SIGSTOP %s replica %d", role, target), p.Resume, p.Pause()
	case "partition/isolate":
		return fmt.Sprintf("%s replica %d isolated from replicas and clients", role, target),
			healRules([]uint64{target}, false), setRules(target, transport.Rule{Drop: 1})
	case "partition/leader-from-replicas":
		return fmt.Sprintf("%s replica %d cut off from replicas %s, clients still reach it", role, target, idList(others)),
			healRules([]uint64{target}, false), setRules(target, transport.Rule{Peers: others, Drop: 1})
	case "partition/split":
		minority := append([]uint64{target}, pickN(others, s.minority-1, s.pick)...)
		majority := slices.DeleteFunc(slices.Clone(ids), func(id uint64) bool { return slices.Contains(minority, id) })
		var errs []error
		for _, id := range minority {
			errs = append(errs, setRules(id, transport.Rule{Peers: majority, Drop: 1}))
		}
		return fmt.Sprintf("replicas %s | %s (clients reach all)", idList(minority), idList(majority)),
			healRules(minority, false), errors.Join(errs...)
	case "partition/client-from-leader":
		bc := r.clients[s.pick%uint64(len(r.clients))]
		err := bc.c.Faults().Set(transport.RuleSet{Rules: []transport.Rule{{Peers: []uint64{target}, Drop: 1}}})
		return fmt.Sprintf("client at %s cut off from %s replica %d", bc.site, role, target), healRules(nil, true), err
	case "link/slow":
		ms := float64(s.delay.Milliseconds())
		slow := transport.Rule{Dir: transport.Out, DelayMs: ms, JitterMs: float64(jitterOf(s.delay).Milliseconds())}
		toTarget := slow
		toTarget.Peers = []uint64{target}
		errs := []error{setRules(target, slow)}
		for _, id := range others {
			errs = append(errs, setRules(id, toTarget))
		}
		for _, bc := range r.clients {
			errs = append(errs, bc.c.Faults().Set(transport.RuleSet{Rules: []transport.Rule{toTarget}, Seed: s.pick}))
		}
		return fmt.Sprintf("every link of %s replica %d slowed by %v ± %v each way", role, target, s.delay, jitterOf(s.delay)),
			healRules(ids, true), errors.Join(errs...)
	case "link/lossy":
		return fmt.Sprintf("%s replica %d loses %.0f%% of frames both ways", role, target, 100*s.drop),
			healRules([]uint64{target}, false), setRules(target, transport.Rule{Drop: s.drop})
	case "restart-all/":
		for _, id := range ids {
			r.procs.Proc(id).Kill()
		}
		return "SIGKILL every replica", func() error { return r.procs.RestartAll(ctx, ids) }, nil
	}
	return "", func() error { return nil }, fmt.Errorf("unknown fault %s/%s", s.kind, s.variant)
}

// target resolves the step's replica: the leader, or a follower chosen by
// the step's pick. Without a known leader any replica will do.
func (r *run) target(s *faultStep, ids []uint64, leader uint64) (uint64, string) {
	if leader == 0 {
		return ids[s.pick%uint64(len(ids))], "replica (no leader known)"
	}
	if s.leader || s.variant == "leader-from-replicas" || s.variant == "client-from-leader" {
		return leader, "leader"
	}
	followers := slices.DeleteFunc(slices.Clone(ids), func(id uint64) bool { return id == leader })
	return followers[s.pick%uint64(len(followers))], "follower"
}

// leader asks every replica who leads and believes the one of the highest
// term, falling back to a client's belief; 0 if nobody knows.
func (r *run) leader(ctx context.Context) uint64 {
	var best, term uint64
	for _, p := range r.procs.List() {
		if !p.Running() {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		st, err := p.Status(sctx)
		cancel()
		if err == nil && st.Leader != 0 && st.Term >= term {
			best, term = uint64(st.Leader), st.Term
		}
	}
	if best == 0 && len(r.clients) > 0 {
		best = r.clients[0].c.Leader()
	}
	return best
}

// pickN chooses n of ids, deterministically from pick.
func pickN(ids []uint64, n int, pick uint64) []uint64 {
	ids = slices.Clone(ids)
	var out []uint64
	for ; n > 0 && len(ids) > 0; n-- {
		i := int(pick % uint64(len(ids)))
		pick /= uint64(len(ids))
		out = append(out, ids[i])
		ids = slices.Delete(ids, i, i+1)
	}
	return out
}

func idList(ids []uint64) string {
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprint(id))
	}
	return "{" + strings.Join(s, ",") + "}"
}
