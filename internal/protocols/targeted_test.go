package protocols_test

import (
	"slices"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// The swarm's targeted kinds: each combines faults the way one recovery
// path needs them, with the replicas, links, and times drawn at random.
// Random kinds combined by layers reach these combinations too rarely to
// matter (a review found both holes below by construction, 5,000 random
// seeds did not).

// splitWitnesses aims at a new leader's replay order (CURP-HO's recovery
// at f ≥ 2). The leader is cut off from the replicas while clients still
// reach it, and every clock runs slow, so it goes on completing fast
// paths while no one is elected. One client cannot reach one follower,
// and every other client reaches another follower late, so that
// witnesses hold what they share in different orders. Then the leader
// and f − 1 of the other followers crash, and the survivors, their clocks
// back, elect a leader that replays from pools that disagree; it has a
// second to do so before the fault heals.
func (n *nemesis) splitWitnesses(leader wire.NodeID, others []wire.NodeID, crashAt time.Duration) {
	s := n.s
	clients := s.Clients()
	s.Partition([]wire.NodeID{leader}, others)
	slow := 0.05 + 0.2*n.rng.Float64()
	for _, r := range s.Replicas() {
		s.SetTickRate(r, slow)
		n.drifted = append(n.drifted, r)
	}
	// The client that cannot reach a follower still reaches the replica
	// at its own site, which answers its weak operations.
	cut := n.pick(clients)
	shuffled := slices.Clone(others)
	n.rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if last := len(shuffled) - 1; last > 0 && s.Site(shuffled[last]) == s.Site(cut) {
		shuffled[0], shuffled[last] = shuffled[last], shuffled[0]
	}
	lateAt, cutAt := shuffled[0], shuffled[len(shuffled)-1]
	delay := time.Duration(100+n.rng.IntN(300)) * time.Millisecond
	for _, c := range clients {
		if c != cut {
			s.SlowLink(c, lateAt, delay)
		}
	}
	s.Block([]wire.NodeID{cut}, []wire.NodeID{cutAt})
	n.note("leader %d cut off from the replicas, clients still reach it; clocks at %.2fx; "+
		"clients but %d reach replica %d %v late, client %d cannot reach replica %d",
		leader, slow, cut, lateAt, delay, cut, cutAt)
	// The followers the witnesses' disagreement lives in survive; others
	// crash with the leader, f in all.
	victims := []wire.NodeID{leader}
	if len(shuffled) > 2 {
		middle := shuffled[1 : len(shuffled)-1]
		victims = append(victims, middle[:min(len(middle), (len(s.Replicas())-1)/2-1)]...)
	}
	epoch := n.epoch
	s.At(s.Now()+crashAt, func() {
		if n.epoch != epoch {
			return
		}
		for _, v := range victims {
			n.crash(v, leader)
		}
		for _, r := range s.Replicas() {
			if s.Up(r) {
				s.SetTickRate(r, n.rates[r])
			}
		}
		n.note("the survivors' clocks are back")
	})
}

// snapshotLeader aims at the clock a snapshot carries. A follower is cut
// off from the replicas (clients still reach it) with its clock running
// four to six times fast, until the log has moved past what the leader
// keeps, and half the time one client hears its replies badly and
// retries. Reconnected, the follower catches up by snapshot; the moment
// it has installed one and holds the leader's whole log, the leader
// crashes and the other replicas' clocks slow, so that it is elected,
// likely before it applied a clock entry after the snapshot: its first
// clock entry counts from the ticks the snapshot gave it, and must not
// from those it gained while cut off.
func (n *nemesis) snapshotLeader(others []wire.NodeID, cutoff time.Duration) {
	s := n.s
	up := slices.DeleteFunc(slices.Clone(others), func(r wire.NodeID) bool { return !s.Up(r) || s.Paused(r) })
	if len(up) == 0 {
		return
	}
	f := n.pick(up)
	rest := slices.DeleteFunc(slices.Clone(s.Replicas()), func(r wire.NodeID) bool { return r == f })
	s.SetTickRate(f, n.prof.fastDrift)
	n.drifted = append(n.drifted, f)
	s.Partition([]wire.NodeID{f}, rest)
	n.note("follower %d cut off from the replicas for %v, clients still reach it; its clock now runs at %.2fx",
		f, cutoff.Round(time.Millisecond), n.prof.fastDrift)
	if clients := s.Clients(); len(clients) > 0 && n.rng.IntN(2) == 0 {
		c, loss := n.pick(clients), 0.3+0.6*n.rng.Float64()
		for _, r := range rest {
			s.LossyLink(r, c, loss)
		}
		n.note("client %d hears from replicas %v with loss %.2f", c, rest, loss)
	}
	installed := s.Replica(f).Metrics().SnapshotsInstalled
	epoch := n.epoch
	s.At(s.Now()+cutoff, func() {
		if n.epoch != epoch {
			return
		}
		// Its clock goes back to its rate, the ticks it gained stay: a
		// clock running several times fast would, once it leads, expire
		// sessions as fast, a fault beyond the bound the expiry assumes.
		s.Reconnect([]wire.NodeID{f}, rest)
		s.SetTickRate(f, n.rates[f])
		n.note("follower %d reconnected, its clock back at %.2fx", f, n.rates[f])
		n.quietLeader()
		deadline := s.Now() + catchUp
		var wait func()
		wait = func() {
			if n.epoch != epoch || !s.Up(f) {
				return
			}
			if !n.caughtUpBySnapshot(f, installed) {
				if s.Now() < deadline {
					s.At(s.Now()+2*time.Millisecond, wait)
				} else {
					n.note("follower %d caught up by no snapshot, or not to the leader's log, within %v", f, catchUp)
				}
				return
			}
			n.electAfterSnapshot(f, rest, epoch)
		}
		wait()
	})
}

// quietLeader has the leader go quiet while a follower catches up: no
// client reaches it and its clock runs at 0.3x, so that it logs nothing
// new for a while (clock entries but rarely). Otherwise a clock entry is
// nearly always in flight, and the follower applies one right after the
// snapshot, which resets its ticks whatever the snapshot did. (Slower,
// its heartbeats would come later than the followers' election timeout.)
func (n *nemesis) quietLeader() {
	s := n.s
	leader := s.Leader()
	if leader == 0 {
		return
	}
	s.SetTickRate(leader, 0.3)
	n.drifted = append(n.drifted, leader)
	s.Block(s.Clients(), []wire.NodeID{leader})
	n.note("leader %d goes quiet: no client reaches it, its clock runs at 0.3x", leader)
}

// caughtUpBySnapshot reports whether follower f has installed a snapshot
// since it had installed installed, has applied nothing after it, and
// holds as much log as the leader, all of it committed: another replica
// cannot then hold more than f, and f can be elected.
func (n *nemesis) caughtUpBySnapshot(f wire.NodeID, installed uint64) bool {
	s := n.s
	leader := s.Leader()
	if leader == 0 || leader == f || s.Replica(f).Metrics().SnapshotsInstalled == installed {
		return false
	}
	l, fp := s.Replica(leader).(logPositions), s.Replica(f).(logPositions)
	return l.Committed() == l.LastIndex() && fp.LastIndex() == l.LastIndex() && fp.AppliedIndex() < fp.FirstIndex()
}

// electAfterSnapshot crashes the leader just as follower f has installed
// a snapshot, and until f leads runs every other replica's clock at 0.2x
// and f's at 1.5x, so that f times out first. (At the partition's rate f's
// election timeout would be shorter than a round trip, and it would never
// gather its votes.)
func (n *nemesis) electAfterSnapshot(f wire.NodeID, rest []wire.NodeID, epoch int) {
	s := n.s
	leader := s.Leader()
	n.note("follower %d installed a snapshot; leader %d", f, leader)
	if leader != 0 && leader != f {
		n.crash(leader, leader)
	}
	s.SetTickRate(f, 1.5)
	for _, r := range rest {
		s.SetTickRate(r, 0.2)
		n.drifted = append(n.drifted, r)
	}
	deadline := s.Now() + 2*time.Second
	var elected func()
	elected = func() {
		if n.epoch != epoch {
			return
		}
		if s.Leader() != f && s.Now() < deadline {
			s.At(s.Now()+10*time.Millisecond, elected)
			return
		}
		for _, r := range s.Replicas() {
			s.SetTickRate(r, n.rates[r])
		}
		n.note("replica %d leads (follower %d caught up); clocks back", s.Leader(), f)
		s.At(s.Now()+200*time.Millisecond, func() {
			if s.Up(f) {
				n.note("follower %d has forgotten %d idle sessions", f, s.Replica(f).Metrics().SessionsExpired)
			}
		})
	}
	elected()
}
