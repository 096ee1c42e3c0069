package protocols_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// nemesis injects faults drawn from a seed into a simulated run, one at a
// time, each healed before the next: partitions (symmetric and one-way), a
// leader cut off from the replicas but not from clients, clients cut off
// from the leader or from their closest replica, slow links long enough
// that a deposed leader's reply beats the new leader's, pauses, and crash-
// restarts of the leader or a follower from what their disks kept. Every
// replica's clock also runs at its own rate, so check-quorum and election
// timers drift apart. One replica at most is down at a time, unless the
// run also has power cuts (withPowerCuts): every replica crashes at once.
// With a profile (swarm), the seed first draws which of these kinds it
// uses and how hard, then its schedule, which adds client links slow or
// lossy one way, long partitions caught up by snapshot, and layers of
// several faults at once with up to f replicas down (see swarm_test.go).
type nemesis struct {
	s   *sim.Sim
	rng *rand.Rand
	// cuts draws the power cuts, nil without them.
	cuts *rand.Rand
	log  []string
	// stopped: faults still scheduled are not injected.
	stopped bool
	// epoch counts heals: a fault's later steps run only within its own.
	epoch int
	down  []wire.NodeID // crashed or paused, restored at heal
	// failedRestarts lists the replicas that could not restart.
	failedRestarts []string

	// prof, when set, draws the faults as swarm testing does (see
	// swarm_test.go); rates are then the replicas' clock rates, which a
	// drifted replica gets back at heal.
	prof    *profile
	rates   map[wire.NodeID]float64
	drifted []wire.NodeID
	// longPartitions counts the long partitions injected, bySnapshot
	// those whose follower caught up by snapshot.
	longPartitions, bySnapshot int
}

func newNemesis(s *sim.Sim, seed uint64) *nemesis {
	return &nemesis{s: s, rng: rand.New(rand.NewPCG(seed, 0xfa17))}
}

// withPowerCuts makes one fault in five a power cut: every replica
// crashes at once and keeps only what its disk synced, and all restart
// at heal. A seed's faults then differ from the same seed's without cuts.
func (n *nemesis) withPowerCuts(seed uint64) *nemesis {
	n.cuts = rand.New(rand.NewPCG(seed, 0xc07))
	return n
}

// swarm has the nemesis draw its faults from a profile (see drawProfile).
func (n *nemesis) swarm(p *profile) *nemesis {
	n.prof = p
	return n
}

// start skews the clocks and schedules faults from first until end; a
// swarm nemesis schedules its profile's faults from first.
func (n *nemesis) start(first, end time.Duration) {
	if n.prof != nil {
		n.startSwarm(first)
		return
	}
	for _, r := range n.s.Replicas() {
		rate := 0.85 + 0.3*n.rng.Float64()
		n.s.SetTickRate(r, rate)
		n.note("replica %d ticks at %.2fx", r, rate)
	}
	for at := first; at < end; {
		length := time.Duration(100+n.rng.IntN(900)) * time.Millisecond
		n.s.At(at, n.inject)
		n.s.At(at+length, n.healNow)
		at += length + time.Duration(50+n.rng.IntN(300))*time.Millisecond
	}
}

// roles lists the cluster as a fault is drawn against it: the leader (0
// between leaders), every replica, the replicas but the leader, the
// clients.
func (n *nemesis) roles() (leader wire.NodeID, replicas, others, clients []wire.NodeID) {
	leader, replicas = n.s.Leader(), n.s.Replicas()
	others = slices.DeleteFunc(slices.Clone(replicas), func(r wire.NodeID) bool { return r == leader })
	return leader, replicas, others, n.s.Clients()
}

// pick draws one of ids.
func (n *nemesis) pick(ids []wire.NodeID) wire.NodeID { return ids[n.rng.IntN(len(ids))] }

func (n *nemesis) note(format string, args ...any) {
	n.log = append(n.log, fmt.Sprintf("%8v ", n.s.Now().Round(time.Millisecond))+fmt.Sprintf(format, args...))
}

// stop heals the fault in force and injects no more.
func (n *nemesis) stop() {
	n.stopped = true
	n.healNow()
}

func (n *nemesis) inject() {
	if n.stopped {
		return
	}
	n.healNow()
	if n.cuts != nil && n.cuts.IntN(5) == 0 {
		n.powerCut()
		return
	}
	s := n.s
	leader, replicas, others, clients := n.roles()
	switch kind := n.rng.IntN(12); {
	case kind == 11 && leader != 0:
		n.deposedLeader(leader, others)
	case kind == 9 && leader != 0:
		n.witnessRestartThenLeaderCrash(leader, others)
	case kind == 10 && leader != 0 && len(clients) > 0:
		n.unevenWritesThenLeaderCrash(n.pick(clients), leader, n.pick(others))
	case kind == 0 && leader != 0:
		s.Partition([]wire.NodeID{leader}, others)
		n.note("leader %d cut off from the replicas, clients still reach it", leader)
	case kind == 1:
		cut := n.rng.IntN(len(replicas)-1) + 1
		shuffled := slices.Clone(replicas)
		n.rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		s.Partition(shuffled[:cut], shuffled[cut:])
		n.note("partition %v | %v", shuffled[:cut], shuffled[cut:])
	case kind == 2:
		a, b := n.pick(replicas), n.pick(replicas)
		if a != b {
			s.Block([]wire.NodeID{a}, []wire.NodeID{b})
			n.note("one way: %d cannot reach %d", a, b)
		}
	case kind == 3 && leader != 0 && len(clients) > 0:
		c := n.pick(clients)
		s.Partition([]wire.NodeID{c}, []wire.NodeID{leader})
		n.note("client %d cut off from leader %d", c, leader)
	case kind == 4 && len(clients) > 0:
		c, r := n.pick(clients), n.pick(replicas)
		s.Partition([]wire.NodeID{c}, []wire.NodeID{r})
		n.note("client %d cut off from replica %d", c, r)
	case kind == 5:
		a, b := n.pick(replicas), n.pick(replicas)
		extra := time.Duration(50+n.rng.IntN(250)) * time.Millisecond
		s.SlowLink(a, b, extra)
		if c := clients; len(c) > 0 && leader != 0 {
			s.SlowLink(leader, n.pick(c), extra)
		}
		n.note("slow links from %d to %d and from leader %d, +%v", a, b, leader, extra)
	case kind == 6:
		r := n.pick(replicas)
		s.Pause(r)
		n.down = append(n.down, r)
		n.note("pause replica %d", r)
	default:
		victim := n.pick(replicas)
		if kind == 7 && leader != 0 {
			victim = leader
		}
		s.Crash(victim)
		n.down = append(n.down, victim)
		n.note("crash replica %d (leader %d); it restarts from its disk at heal", victim, leader)
	}
}

// powerCut crashes every replica at once; they restart at heal.
func (n *nemesis) powerCut() {
	for _, r := range n.s.Replicas() {
		n.s.Crash(r)
		n.down = append(n.down, r)
	}
	n.note("power cut: every replica crashes; all restart from their disks at heal")
}

// witnessRestartThenLeaderCrash: the leader, cut off from the replicas,
// completes operations on the fast path that cannot commit; a witness that
// recorded them restarts; then the leader crashes.
func (n *nemesis) witnessRestartThenLeaderCrash(leader wire.NodeID, others []wire.NodeID) {
	s := n.s
	s.Partition([]wire.NodeID{leader}, others)
	witness := others[n.rng.IntN(len(others))]
	n.note("leader %d cut off from the replicas; witness %d will restart, then the leader crash", leader, witness)
	epoch := n.epoch
	s.At(s.Now()+time.Duration(100+n.rng.IntN(200))*time.Millisecond, func() {
		if n.epoch != epoch || !s.Up(witness) || !s.Up(leader) {
			return
		}
		s.Crash(witness)
		if err := s.Restart(witness); err != nil {
			n.restartFailed(witness, err)
		}
		n.note("witness %d restarted", witness)
		s.At(s.Now()+time.Duration(10+n.rng.IntN(100))*time.Millisecond, func() {
			if n.epoch != epoch || !s.Up(leader) || !n.mayTakeDown() {
				return
			}
			s.Crash(leader)
			n.down = append(n.down, leader)
			s.Heal()
			n.note("leader %d crashed", leader)
		})
	})
}

// deposedLeader: the leader, cut off from the replicas, pauses while they
// elect another, then wakes still cut off and still believing it leads,
// with clients reaching it.
func (n *nemesis) deposedLeader(leader wire.NodeID, others []wire.NodeID) {
	s := n.s
	s.Partition([]wire.NodeID{leader}, others)
	s.Pause(leader)
	// Its clock runs slow from now on: check-quorum comes late.
	s.SetTickRate(leader, 0.4)
	n.note("leader %d cut off from the replicas and paused; its clock now runs at 0.4x", leader)
	epoch := n.epoch
	s.At(s.Now()+time.Duration(300+n.rng.IntN(400))*time.Millisecond, func() {
		if n.epoch != epoch {
			return
		}
		s.Resume(leader)
		n.note("leader %d wakes, still cut off from the replicas", leader)
	})
	n.down = append(n.down, leader) // resumed at heal if still paused
}

// unevenWritesThenLeaderCrash: a client's messages reach neither the leader
// nor one follower for a while, so what it writes is recorded unevenly; the
// leader crashes, and the client reaches no one until a new leader has had
// time to recover.
func (n *nemesis) unevenWritesThenLeaderCrash(client, leader, follower wire.NodeID) {
	s := n.s
	s.Block([]wire.NodeID{client}, []wire.NodeID{leader, follower})
	n.note("client %d cannot reach leader %d nor replica %d", client, leader, follower)
	epoch := n.epoch
	s.At(s.Now()+time.Duration(100+n.rng.IntN(200))*time.Millisecond, func() {
		if n.epoch != epoch || !s.Up(leader) || !n.mayTakeDown() {
			return
		}
		s.Crash(leader)
		n.down = append(n.down, leader)
		s.Block([]wire.NodeID{client}, s.Replicas())
		n.note("leader %d crashed; client %d reaches no replica", leader, client)
	})
}

// healNow ends the fault in force: links heal, paused replicas resume and
// crashed ones restart from their disks.
func (n *nemesis) healNow() {
	n.epoch++
	n.s.Heal()
	for _, r := range n.down {
		if n.s.Up(r) {
			n.s.Resume(r)
			continue
		}
		if err := n.s.Restart(r); err != nil {
			n.restartFailed(r, err)
		}
	}
	if len(n.down) > 0 {
		n.note("heal (replicas %v back)", n.down)
	}
	n.down = n.down[:0]
	for _, r := range n.drifted {
		n.s.SetTickRate(r, n.rates[r])
	}
	n.drifted = n.drifted[:0]
}

// restartFailed notes a replica that could not restart from its own
// disk: a durability bug, which the checked run reports (a replica left
// down otherwise shows only as a stall, or not at all).
func (n *nemesis) restartFailed(r wire.NodeID, err error) {
	n.note("restart of replica %d failed: %v", r, err)
	n.failedRestarts = append(n.failedRestarts, fmt.Sprintf("replica %d: %v", r, err))
}

func (n *nemesis) String() string { return strings.Join(n.log, "\n") }
