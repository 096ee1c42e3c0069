package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hybridkv/hybridkv/internal/config"
)

// NemesisKinds are the faults a nemesis can inject.
var NemesisKinds = []string{"kill", "pause", "partition", "link", "restart-all"}

// Nemesis injects faults into a run with real replica processes, one at a
// time, each healed before the next and all healed before the load stops.
type Nemesis struct {
	// Kinds are drawn from NemesisKinds.
	Kinds []string
	// Seed fixes the schedule: which faults, when, for how long, and
	// which replicas by role.
	Seed uint64
}

// ParseNemesis reads a comma-separated list of fault kinds.
func ParseNemesis(list string, seed uint64) (*Nemesis, error) {
	if list == "" {
		return nil, nil
	}
	n := &Nemesis{Seed: seed}
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(NemesisKinds, k) {
			return nil, fmt.Errorf("nemesis fault %q: want a list of %s", k, strings.Join(NemesisKinds, ", "))
		}
		if !slices.Contains(n.Kinds, k) {
			n.Kinds = append(n.Kinds, k)
		}
	}
	return n, nil
}

// faultStep is one scheduled fault. Replicas are chosen by role when the
// schedule is drawn and resolved to IDs only when the fault is injected,
// since who leads is known only then.
type faultStep struct {
	at, length time.Duration
	kind       string
	// variant refines the kind: leader or follower for kill and pause;
	// isolate, split, leader-from-replicas or client-from-leader for
	// partition; slow or lossy for link.
	variant string
	// leader says whether the replica to hit is the leader.
	leader bool
	// minority is how many replicas a split cuts off.
	minority int
	delay    time.Duration // slow link: extra one-way delay
	drop     float64       // lossy link: fraction of frames lost
	// pick chooses among candidates (which follower, which client) at
	// injection time.
	pick uint64
}

// down is how many replicas the step takes down or cuts off from a
// majority at once.
func (s *faultStep) down(replicas int) int {
	switch {
	case s.kind == "restart-all":
		return replicas
	case s.kind == "partition" && s.variant == "split":
		return s.minority
	case s.kind == "partition" && s.variant == "client-from-leader", s.kind == "link":
		return 0 // degraded, not down
	}
	return 1
}

func (s *faultStep) String() string {
	role := "follower"
	if s.leader {
		role = "leader"
	}
	var what string
	switch s.kind + "/" + s.variant {
	case "kill/":
		what = "SIGKILL the " + role + ", restart it from its data dir"
	case "pause/":
		what = "SIGSTOP the " + role + ", then SIGCONT"
	case "partition/isolate":
		what = "isolate the " + role + " from everyone"
	case "partition/split":
		what = fmt.Sprintf("split off %d replica(s) from the others (clients reach all)", s.minority)
	case "partition/leader-from-replicas":
		what = "cut the leader off from the replicas, clients still reach it"
	case "partition/client-from-leader":
		what = "cut one client site off from the leader"
	case "link/slow":
		what = fmt.Sprintf("slow every link of the %s by %v ± %v", role, s.delay, jitterOf(s.delay))
	case "link/lossy":
		what = fmt.Sprintf("lose %.0f%% of the %s's frames both ways", 100*s.drop, role)
	case "restart-all/":
		what = "SIGKILL every replica, restart them all"
	}
	return fmt.Sprintf("+%5.1fs for %4.1fs  %-11s %s", s.at.Seconds(), s.length.Seconds(), s.kind, what)
}

// jitterOf is the jitter of a slowed link: a quarter of its extra delay.
func jitterOf(delay time.Duration) time.Duration { return (delay / 4).Round(time.Millisecond) }

// Schedule timing. Faults last long enough for an election to happen or
// not, and the gap after a heal is long enough to see the recovery before
// the next fault.
const (
	minFaultLen  = 1500 * time.Millisecond
	maxFaultLen  = 4 * time.Second
	minHealGap   = 1500 * time.Millisecond
	maxHealGap   = 3 * time.Second
	firstFaultAt = time.Second
	// settle is the time left after the last heal before the load stops,
	// so the run ends on a healed cluster serving again.
	settle = 2 * time.Second
	// restartRoom is added to settle after a fault healed by restarting
	// processes, which takes seconds of its own: a restart of every
	// replica drawn just before the end was still under way when the load
	// stopped, and its recovery went unmeasured.
	restartRoom = 5 * time.Second
)

// schedule draws the faults of a run of length total on a cluster of n
// replicas tolerating f failures. Kinds are taken in rounds, each round a
// fresh permutation, so every listed kind appears once the run is long
// enough for as many faults.
func (n *Nemesis) schedule(total time.Duration, replicas, f int) []faultStep {
	rng := rand.New(rand.NewPCG(n.Seed, 0x6e656d65))
	dur := func(lo, hi time.Duration) time.Duration {
		return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)).Round(100*time.Millisecond)
	}
	var steps []faultStep
	var round []string
	for at := firstFaultAt; ; {
		if len(round) == 0 {
			round = slices.Clone(n.Kinds)
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		s := faultStep{at: at, length: dur(minFaultLen, maxFaultLen), kind: round[0], leader: rng.IntN(2) == 0, pick: rng.Uint64()}
		round = round[1:]
		switch s.kind {
		case "partition":
			s.variant = []string{"isolate", "split", "leader-from-replicas", "client-from-leader"}[rng.IntN(4)]
			s.minority = 1 + rng.IntN(max(f, 1))
		case "link":
			s.variant = []string{"slow", "lossy"}[rng.IntN(2)]
			s.delay = time.Duration(50+rng.IntN(251)) * time.Millisecond
			s.drop = 0.1 + 0.3*rng.Float64()
		}
		end := at + s.length + settle
		if s.kind == "kill" || s.kind == "restart-all" {
			end += restartRoom
		}
		if end > total {
			return steps
		}
		if s.kind != "restart-all" && s.down(replicas) > f {
			// Never drawn with the bounds above; kept so a change to
			// them cannot silently break the promise of at most f down.
			panic(fmt.Sprintf("nemesis: %v takes %d of %d replicas down", &s, s.down(replicas), replicas))
		}
		steps = append(steps, s)
		at += s.length + dur(minHealGap, maxHealGap)
	}
}

// nemesisSchedule checks that a nemesis can run with these options and
// draws its schedule, which it prints to o.Progress.
func nemesisSchedule(o Options, cfg *config.Config) ([]faultStep, error) {
	n := o.Nemesis
	if n == nil {
		return nil, nil
	}
	switch {
	case o.Binary == "":
		return nil, errors.New("a nemesis needs replicas started by the run (not --external)")
	case o.Crash != nil:
		return nil, errors.New("a nemesis and a --kill-* crash do not mix: add kill to the nemesis instead")
	case cfg.F() < 1:
		return nil, fmt.Errorf("a nemesis needs a cluster that tolerates a failure (3 replicas or more), not %d", len(cfg.Replicas))
	case cfg.Bench.Reqs > 0:
		return nil, errors.New("a nemesis needs a run of fixed duration, not a request count")
	}
	steps := n.schedule(cfg.Bench.Warmup()+cfg.Bench.Duration(), len(cfg.Replicas), cfg.F())
	if o.Progress != nil {
		for _, line := range scheduleNotes(n, steps, cfg) {
			fmt.Fprintln(o.Progress, line)
		}
	}
	return steps, nil
}

// scheduleNotes describes the schedule, one line per fault.
func scheduleNotes(n *Nemesis, steps []faultStep, cfg *config.Config) []string {
	lines := []string{fmt.Sprintf("nemesis schedule (seed %d, %s; %d replicas, at most f=%d down at once except restart-all): %d faults",
		n.Seed, strings.Join(n.Kinds, ","), len(cfg.Replicas), cfg.F(), len(steps))}
	for i := range steps {
		lines = append(lines, "  "+steps[i].String())
	}
	return lines
}
