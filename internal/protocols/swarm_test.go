package protocols_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Swarm testing, as TigerBeetle's simulator does it: each seed first draws
// a profile (which kinds of fault it uses, and how hard), then the schedule
// of faults from it. A nemesis that always mixes every kind at the same
// rates spreads itself thin: some seeds now hammer one kind, some combine
// a few, some inject a single fault, and the combinations a bug needs
// (several faults at once) come up in some seeds rather than in none.

var swarmKinds = flag.String("swarm-kinds", "", "comma-separated fault kinds every swarm profile uses instead of those it draws (e.g. split-witnesses,crash)")

// faultKind is a kind of fault the swarm nemesis may inject.
type faultKind int

const (
	leaderIsolated   faultKind = iota // leader cut off from the replicas, clients reach it
	replicaPartition                  // the replicas split in two
	oneWay                            // one replica cannot reach another
	clientCut                         // a client cut off from the leader or a replica
	slowLinks                         // slow links between replicas and from the leader
	pauseReplica                      // a replica paused
	crashReplica                      // a crash-restart of the leader or a follower
	witnessRestart                    // see witnessRestartThenLeaderCrash
	unevenWrites                      // see unevenWritesThenLeaderCrash
	deposedLeader                     // see deposedLeader
	clientLink                        // one client's link to one replica slow or lossy, one way
	longPartition                     // a follower cut off long with a fast clock, caught up by snapshot
	firstKinds                        // the kinds the first profiles drew from; those after are drawn on top (see drawProfile)
	splitWitnesses                    // see splitWitnesses
	snapshotLeader                    // see snapshotLeader
	numKinds
	powerCut // every replica at once; only with power cuts, never in a profile's kinds
)

var kindNames = [...]string{"leader-isolated", "partition", "one-way", "client-cut", "slow-links", "pause",
	"crash", "witness-restart", "uneven-writes", "deposed-leader", "client-link", "long-partition", "",
	"split-witnesses", "snapshot-leader", "", "power-cut"}

// kindNamed returns the kind of a name, as String gives it.
func kindNamed(name string) (faultKind, bool) {
	i := slices.Index(kindNames[:], name)
	return faultKind(i), i >= 0 && name != "" && faultKind(i) < numKinds
}

func (k faultKind) String() string { return kindNames[k] }

// profile is what a seed's faults are drawn from.
type profile struct {
	kinds []faultKind
	// faults is how many faults the schedule holds; each lasts from
	// length[0] to length[1] and the next starts gap[0] to gap[1] later.
	faults      int
	length, gap [2]time.Duration
	// compose is the chance that a fault gets layers on top (see layers):
	// client links if clientLink is among the kinds, crashes of up to f
	// replicas if crashReplica is.
	compose float64
	// loss and slow bound a client link's loss rate and extra delay.
	loss float64
	slow time.Duration
	// skew bounds how far each replica's clock rate is from 1.
	skew float64
	// drift bounds a long partition's clock rate (at most 2.5x); partition
	// bounds how long its follower stays cut off.
	drift     float64
	partition [2]time.Duration
	// fastDrift is a snapshot-leader follower's clock rate while it is cut
	// off (4 to 6): fast enough that the ticks it gains outrun the session
	// expiry.
	fastDrift float64
	// compactEvery, compactKeep and memoryKeep are the replicas' log
	// compaction thresholds (sim.Config's), zero for the defaults.
	compactEvery, compactKeep, memoryKeep uint64
	// sessionExpiry, when set, has the replicas forget idle sessions; idle
	// then has every session go quiet for that long halfway through.
	sessionExpiry, idle time.Duration
	// cuts is the chance a fault is a power cut (TestCheckedPowerCuts).
	cuts float64
	// weakShare, when set, replaces the workload's even mix of strong and
	// weak operations with a weak-heavy one, and pipeline its depth:
	// CURP-HO's weak path keeps pools, chains and parked reads that only
	// strong operations and commits drain, and a run with few strong
	// operations is where they grow.
	weakShare float64
	pipeline  int
	// ops, when set, is how many operations each session submits.
	ops int
}

func (p *profile) has(k faultKind) bool { return slices.Contains(p.kinds, k) }

// profileOptions are what a seed's profile is drawn for.
type profileOptions struct {
	// powerCuts: TestCheckedPowerCuts's profiles, which draw how often a
	// fault is a power cut.
	powerCuts bool
	// expiry: every profile has small compaction thresholds and session
	// expiry with an idle spell whatever the draws say, and the seed's
	// other draws as they are.
	expiry bool
	// firstKinds: the profile as drawn before the targeted kinds existed
	// (see drawTargeted), for replaying a seed that found a bug then.
	firstKinds bool
}

// drawProfile draws a seed's profile, from a source of its own so that
// the schedule's draws do not shift it.
func drawProfile(seed uint64, o profileOptions) *profile {
	rng := rand.New(rand.NewPCG(seed, 0x5a4a))
	p := &profile{}
	all := make([]faultKind, firstKinds)
	for i := range all {
		all[i] = faultKind(i)
	}
	switch rng.IntN(4) {
	case 0: // one kind only
		p.kinds = []faultKind{all[rng.IntN(len(all))]}
	case 1: // a few
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		p.kinds = all[:2+rng.IntN(2)]
		slices.Sort(p.kinds)
	default: // each with even odds
		for _, k := range all {
			if rng.IntN(2) == 0 {
				p.kinds = append(p.kinds, k)
			}
		}
		if len(p.kinds) == 0 {
			p.kinds = []faultKind{all[rng.IntN(len(all))]}
		}
	}
	p.faults = 1 + rng.IntN(9)
	p.length[0] = time.Duration(50+rng.IntN(250)) * time.Millisecond
	p.length[1] = p.length[0] + time.Duration(100+rng.IntN(1000))*time.Millisecond
	p.gap[0] = time.Duration(20+rng.IntN(100)) * time.Millisecond
	p.gap[1] = p.gap[0] + time.Duration(rng.IntN(400))*time.Millisecond
	if p.has(clientLink) || p.has(crashReplica) {
		p.compose = []float64{0, 0.25, 0.6, 1}[rng.IntN(4)]
	}
	p.loss = 0.2 + 0.7*rng.Float64()
	p.slow = time.Duration(50+rng.IntN(450)) * time.Millisecond
	p.skew = 0.2 * rng.Float64()
	p.drift = 1.5 + rng.Float64()
	p.partition[0] = time.Duration(1000+rng.IntN(1000)) * time.Millisecond
	p.partition[1] = p.partition[0] + time.Duration(rng.IntN(2000))*time.Millisecond
	// Small compaction thresholds make a follower that lags a few dozen
	// entries catch up by snapshot; a long partition needs them.
	// They cost time (a run that snapshots often takes up to twice as
	// long), so other seeds have them one time in five.
	if p.has(longPartition) || rng.IntN(5) == 0 || o.expiry {
		p.compactEvery = uint64(16 + rng.IntN(33))
		p.compactKeep = uint64(4 + rng.IntN(9))
		p.memoryKeep = uint64(8 + rng.IntN(17))
	}
	// An expiry must outlast every fault that may keep a client from
	// hearing of its applied operation, or a retry takes effect twice by
	// design; a long partition's follower, whose clock runs fast, may
	// still jump the log's clock past it (ticks gained: up to (drift-1)
	// times the partition).
	// Short expiries log a clock entry every few ticks, and an idle spell
	// is long (a run with one takes three times as long): one seed in five
	// has them, half of those idle.
	// A long partition's follower holds its records, and a client cut off
	// with it its retries, for the whole cut and the catch-up after it:
	// the expiry outlasts that too (the documented fault bound; and more,
	// see outlastFaults), and the fast clock's ticks, up to drift times
	// the cut, can still pass it.
	if rng.IntN(5) == 0 || o.expiry {
		p.sessionExpiry = p.length[1] + time.Duration(1500+rng.IntN(2500))*time.Millisecond
		if p.has(longPartition) {
			p.sessionExpiry = max(p.sessionExpiry, p.partition[1]+catchUp+500*time.Millisecond)
		}
		if rng.IntN(2) == 0 || o.expiry {
			p.idle = 3 * p.sessionExpiry / 2
		}
	}
	if o.powerCuts {
		p.cuts = []float64{0.1, 0.2, 0.4}[rng.IntN(3)]
	}
	// Drawn last, so that the draws above are those of the seeds before
	// weak-heavy mixes existed.
	if rng.IntN(4) == 0 {
		p.weakShare = []float64{0.95, 0.99, 1}[rng.IntN(3)]
		p.pipeline = 2 + rng.IntN(3)
	}
	if !o.firstKinds {
		p.drawTargeted(rng)
		p.outlastFaults()
	}
	return p
}

// maxFault is the longest a fault of the profile lasts: a replica a layer
// crashes early in it stays down, holding its witness records, until it
// heals.
func (p *profile) maxFault() time.Duration {
	longest := p.length[1]
	if p.has(longPartition) || p.has(snapshotLeader) {
		longest = max(longest, p.partition[1]+catchUp+hold)
	}
	if p.has(splitWitnesses) {
		longest = max(longest, splitCrashes[1]+catchUp)
	}
	return longest
}

// outlastFaults raises the session expiry, if the profile has one, to
// outlast its longest fault by expiryMargin, and an idle spell with it:
// the documented fault bound. Seed 738 of CURP-HT, N = 5, found it
// missing: a replica crashed early in a long partition came back after
// 3.8 s with the witness record of a write applied meanwhile, whose
// session had expired (3.87 s) in the snapshot it then installed, and its
// stale record had the write logged and applied again. (The seeds that
// found bugs before the targeted kinds replay without it, as they were
// drawn then.)
func (p *profile) outlastFaults() {
	if p.sessionExpiry == 0 {
		return
	}
	p.sessionExpiry = max(p.sessionExpiry, p.maxFault()+expiryMargin)
	if p.idle > 0 {
		p.idle = max(p.idle, 3*p.sessionExpiry/2)
	}
}

// drawTargeted draws the kinds that came after the first profiles, after
// every other draw, so that a seed that draws none of them keeps the
// profile and schedule it always had. Each is a combination of faults
// aimed at one recovery path (see splitWitnesses and snapshotLeader): one
// profile in four has each, one in six that kind alone. -swarm-kinds
// replaces the kinds drawn.
func (p *profile) drawTargeted(rng *rand.Rand) {
	for _, k := range []faultKind{splitWitnesses, snapshotLeader} {
		switch rng.IntN(12) {
		case 0, 1:
			p.kinds = []faultKind{k}
		case 2:
			p.kinds = append(p.kinds, k)
		}
	}
	p.fastDrift = 4 + 2*rng.Float64()
	if forced := forcedKinds(); forced != nil {
		p.kinds = forced
	}
	// Both need the workload to run on through them: a session's thirty
	// operations are often done before a snapshot leader's follower has
	// rejoined. Split witnesses need strong writes completing on the fast
	// path and other sessions' weak writes to the same keys close after;
	// a cut-off leader's strong operations stall their sessions on the
	// first conflict, and a weak-heavy mix keeps sessions going.
	if p.has(splitWitnesses) || p.has(snapshotLeader) {
		p.ops = 100
	}
	if p.has(splitWitnesses) {
		p.weakShare, p.pipeline = 0.9, 2
	}
	// A snapshot leader's follower must fall behind what the leader keeps,
	// and the ticks it gains must matter: sessions expire. A client may
	// hear nothing for the whole fault (a lossy link, then a quiet
	// leader), and a second away from faults after it (see startSwarm):
	// the expiry outlasts both, the documented fault bound.
	if p.has(snapshotLeader) {
		if p.compactEvery == 0 {
			p.compactEvery = uint64(16 + rng.IntN(33))
			p.compactKeep = uint64(4 + rng.IntN(9))
			p.memoryKeep = uint64(8 + rng.IntN(17))
		}
		p.sessionExpiry = max(p.sessionExpiry, p.partition[1]+catchUp+hold+afterSnapshotLeader+500*time.Millisecond)
	}
}

// forcedKinds parses -swarm-kinds, nil when it is empty.
func forcedKinds() []faultKind {
	if *swarmKinds == "" {
		return nil
	}
	var kinds []faultKind
	for _, name := range strings.Split(*swarmKinds, ",") {
		k, ok := kindNamed(strings.TrimSpace(name))
		if !ok {
			panic(fmt.Sprintf("-swarm-kinds: no fault kind %q", name))
		}
		kinds = append(kinds, k)
	}
	return kinds
}

// configure applies the profile's compaction and expiry to a cluster.
func (p *profile) configure(cfg *sim.Config) {
	cfg.CompactEvery, cfg.CompactKeep, cfg.MemoryKeep = p.compactEvery, p.compactKeep, p.memoryKeep
	if cfg.SessionExpiry == 0 {
		cfg.SessionExpiry = p.sessionExpiry
	}
}

func (p *profile) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile: kinds %v; %d faults of %v–%v, %v–%v apart", p.kinds, p.faults,
		p.length[0], p.length[1], p.gap[0], p.gap[1])
	if p.compose > 0 {
		fmt.Fprintf(&b, "; layers on %.0f%% of faults", 100*p.compose)
	}
	if p.cuts > 0 {
		fmt.Fprintf(&b, "; power cuts %.0f%%", 100*p.cuts)
	}
	if p.weakShare > 0 {
		fmt.Fprintf(&b, "; %.0f%% weak, %d in flight per session", 100*p.weakShare, p.pipeline)
	}
	if p.ops > 0 {
		fmt.Fprintf(&b, "; %d operations per session", p.ops)
	}
	fmt.Fprintf(&b, "\nprofile: clock rates 1±%.2f", p.skew)
	if p.has(clientLink) {
		fmt.Fprintf(&b, "; client links lose up to %.2f or add up to %v", p.loss, p.slow)
	}
	if p.has(longPartition) {
		fmt.Fprintf(&b, "; long partitions of %v–%v at up to %.2fx", p.partition[0], p.partition[1], p.drift)
	}
	if p.has(snapshotLeader) {
		fmt.Fprintf(&b, "; snapshot leaders cut off %v–%v at %.2fx", p.partition[0], p.partition[1], p.fastDrift)
	}
	if p.compactEvery > 0 {
		fmt.Fprintf(&b, "; compaction every %d entries, keeping %d (%d in memory)", p.compactEvery, p.compactKeep, p.memoryKeep)
	} else {
		b.WriteString("; default compaction")
	}
	if p.sessionExpiry > 0 {
		fmt.Fprintf(&b, "; sessions expire after %v", p.sessionExpiry)
		if p.idle > 0 {
			fmt.Fprintf(&b, " (idle %v mid-run)", p.idle)
		}
	}
	return b.String()
}

// planned is a fault of the schedule.
type planned struct {
	at, length time.Duration
	kind       faultKind
	// cutoff is how long a long partition's follower stays cut off, the
	// rest of its length for catching up and an election; for split
	// witnesses, when the crashes come.
	cutoff   time.Duration
	composed bool
}

func (f planned) String() string {
	s := fmt.Sprintf("%8v %v for %v", f.at.Round(time.Millisecond), f.kind, f.length.Round(time.Millisecond))
	switch f.kind {
	case longPartition, snapshotLeader:
		s += fmt.Sprintf(" (cut off %v)", f.cutoff.Round(time.Millisecond))
	case splitWitnesses:
		s += fmt.Sprintf(" (crashes at %v)", f.cutoff.Round(time.Millisecond))
	}
	if f.composed {
		s += " + layers"
	}
	return s
}

// catchUp is how long a long partition's follower has, once reconnected,
// to catch up before others may crash; hold how long they then stay down.
const catchUp, hold = time.Second, 800 * time.Millisecond

// splitCrashes bounds when a split-witnesses fault crashes its replicas,
// after it began; it lasts catchUp more.
var splitCrashes = [2]time.Duration{150 * time.Millisecond, 700 * time.Millisecond}

// expiryMargin is how much longer than the longest fault a swarm
// profile's session expiry is, at least: a witness's record may be that
// old already when a fault keeps its replica from hearing that its
// operation applied.
const expiryMargin = 1500 * time.Millisecond

// afterSnapshotLeader is how long, at least, the swarm leaves the cluster
// alone after a snapshot-leader fault: the clients it kept from hearing
// of their applied operations hear of them before anything else does.
const afterSnapshotLeader = time.Second

// startSwarm skews the clocks and draws the schedule from the profile, and
// logs both.
func (n *nemesis) startSwarm(first time.Duration) {
	p := n.prof
	n.log = append(n.log, strings.Split(p.String(), "\n")...)
	n.rates = make(map[wire.NodeID]float64)
	for _, r := range n.s.Replicas() {
		rate := 1 - p.skew + 2*p.skew*n.rng.Float64()
		n.s.SetTickRate(r, rate)
		n.rates[r] = rate
		n.note("replica %d ticks at %.2fx", r, rate)
	}
	between := func(b [2]time.Duration) time.Duration { return b[0] + time.Duration(n.rng.Int64N(int64(b[1]-b[0])+1)) }
	n.log = append(n.log, "schedule:")
	at := first
	for i := range p.faults {
		f := planned{at: at, kind: p.kinds[n.rng.IntN(len(p.kinds))], length: between(p.length)}
		switch {
		case i == 0 && p.has(snapshotLeader):
			f.kind = snapshotLeader // early, while the workload runs
		case i == 0 && p.has(longPartition):
			f.kind = longPartition
		}
		if n.cuts != nil && n.cuts.Float64() < p.cuts {
			f.kind = powerCut
		}
		switch f.kind {
		case longPartition, snapshotLeader:
			f.cutoff = between(p.partition)
			f.length = f.cutoff + catchUp + hold
		case splitWitnesses:
			f.cutoff = between(splitCrashes)
			f.length = f.cutoff + catchUp
		}
		f.composed = f.kind != powerCut && n.rng.Float64() < p.compose
		n.log = append(n.log, "  "+f.String())
		n.s.At(f.at, func() { n.injectPlanned(f) })
		n.s.At(f.at+f.length, n.healNow)
		at += f.length + between(p.gap)
		if f.kind == snapshotLeader {
			at += afterSnapshotLeader
		}
	}
	n.log = append(n.log, "events:")
}

// injectPlanned injects a fault of the schedule, healing the last first.
func (n *nemesis) injectPlanned(f planned) {
	if n.stopped {
		return
	}
	n.healNow()
	if f.kind == powerCut {
		n.powerCut()
		return
	}
	s := n.s
	leader, replicas, others, clients := n.roles()
	kind := f.kind
	switch kind {
	case leaderIsolated, witnessRestart, unevenWrites, deposedLeader, longPartition, splitWitnesses, snapshotLeader:
		if leader == 0 {
			kind = crashReplica
		}
	}
	if (kind == clientCut || kind == clientLink || kind == unevenWrites) && len(clients) == 0 {
		kind = crashReplica
	}
	switch kind {
	case leaderIsolated:
		s.Partition([]wire.NodeID{leader}, others)
		n.note("leader %d cut off from the replicas, clients still reach it", leader)
	case replicaPartition:
		cut := n.rng.IntN(len(replicas)-1) + 1
		shuffled := slices.Clone(replicas)
		n.rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		s.Partition(shuffled[:cut], shuffled[cut:])
		n.note("partition %v | %v", shuffled[:cut], shuffled[cut:])
	case oneWay:
		a, b := n.pick(replicas), n.pick(replicas)
		if a != b {
			s.Block([]wire.NodeID{a}, []wire.NodeID{b})
			n.note("one way: %d cannot reach %d", a, b)
		}
	case clientCut:
		c, r := n.pick(clients), n.pick(replicas)
		if leader != 0 && n.rng.IntN(2) == 0 {
			r = leader
		}
		s.Partition([]wire.NodeID{c}, []wire.NodeID{r})
		n.note("client %d cut off from replica %d (leader %d)", c, r, leader)
	case slowLinks:
		a, b := n.pick(replicas), n.pick(replicas)
		extra := time.Duration(50+n.rng.IntN(250)) * time.Millisecond
		s.SlowLink(a, b, extra)
		if leader != 0 && len(clients) > 0 {
			s.SlowLink(leader, n.pick(clients), extra)
		}
		n.note("slow links from %d to %d and from leader %d, +%v", a, b, leader, extra)
	case pauseReplica:
		r := n.pick(replicas)
		if n.mayTakeDown() {
			s.Pause(r)
			n.down = append(n.down, r)
			n.note("pause replica %d", r)
		}
	case witnessRestart:
		n.witnessRestartThenLeaderCrash(leader, others)
	case unevenWrites:
		n.unevenWritesThenLeaderCrash(n.pick(clients), leader, n.pick(others))
	case deposedLeader:
		n.deposedLeader(leader, others)
	case clientLink:
		n.clientLinks()
	case longPartition:
		n.longPartition(leader, others, f.cutoff)
	case splitWitnesses:
		n.splitWitnesses(leader, others, f.cutoff)
	case snapshotLeader:
		n.snapshotLeader(others, f.cutoff)
	default:
		victim := n.pick(replicas)
		if leader != 0 && n.rng.IntN(2) == 0 {
			victim = leader
		}
		n.crash(victim, leader)
	}
	if f.composed {
		n.layers(f.length)
	}
}

// mayTakeDown reports whether one more replica may crash or pause now: at
// most f are down at once, but in a power cut. Without a profile the
// nemesis's faults keep to one at a time by construction.
func (n *nemesis) mayTakeDown() bool {
	if n.prof == nil {
		return true
	}
	down := 0
	for _, r := range n.s.Replicas() {
		if !n.s.Up(r) || n.s.Paused(r) {
			down++
		}
	}
	return down < (len(n.s.Replicas())-1)/2
}

// crash crashes a replica, if it runs and one more may go down; it
// restarts from its disk at heal.
func (n *nemesis) crash(victim, leader wire.NodeID) bool {
	if !n.s.Up(victim) || !n.mayTakeDown() {
		return false
	}
	n.s.Crash(victim)
	n.down = append(n.down, victim)
	n.note("crash replica %d (leader %d); it restarts from its disk at heal", victim, leader)
	return true
}

// clientLinks makes one or two links between a client and a replica slow
// or lossy, each one way: a client that reaches one follower late, or
// whose messages to another are often lost, or that hears from one late.
func (n *nemesis) clientLinks() {
	s := n.s
	clients, replicas := s.Clients(), s.Replicas()
	for range 1 + n.rng.IntN(2) {
		c, r := clients[n.rng.IntN(len(clients))], replicas[n.rng.IntN(len(replicas))]
		from, to := c, r
		if n.rng.IntN(2) == 0 {
			from, to = r, c
		}
		if n.rng.IntN(2) == 0 {
			extra := (20*time.Millisecond + time.Duration(n.rng.Int64N(int64(n.prof.slow)))).Round(time.Millisecond)
			s.SlowLink(from, to, extra)
			n.note("slow link from %d to %d, +%v", from, to, extra)
		} else {
			p := 0.1 + (n.prof.loss-0.1)*n.rng.Float64()
			s.LossyLink(from, to, p)
			n.note("lossy link from %d to %d, loses %.2f", from, to, p)
		}
	}
}

// layers adds faults on top of the one just injected, as the profile
// allows: client links slow or lossy, and crashes of up to f replicas at
// times drawn within the fault, some restarted before it ends. A deposed
// leader with one client's link to a follower slow, another's to another
// follower lossy, and two replicas crashing is one such combination.
func (n *nemesis) layers(length time.Duration) {
	s := n.s
	if n.prof.has(clientLink) && len(s.Clients()) > 0 && n.rng.IntN(2) == 0 {
		n.clientLinks()
	}
	if !n.prof.has(crashReplica) {
		return
	}
	f := (len(s.Replicas()) - 1) / 2
	epoch := n.epoch
	for range 1 + n.rng.IntN(f) {
		at := s.Now() + time.Duration(n.rng.Int64N(int64(length)*4/5+1))
		restart := time.Duration(0)
		if n.rng.IntN(3) == 0 {
			restart = time.Duration(100+n.rng.IntN(300)) * time.Millisecond
		}
		leaderFirst := n.rng.IntN(2) == 0
		seq := n.rng.Uint64()
		s.At(at, func() {
			if n.epoch != epoch {
				return
			}
			leader := s.Leader()
			victim := leader
			if !leaderFirst || leader == 0 {
				up := slices.DeleteFunc(slices.Clone(s.Replicas()), func(r wire.NodeID) bool { return !s.Up(r) || s.Paused(r) })
				if len(up) == 0 {
					return
				}
				victim = up[seq%uint64(len(up))]
			}
			if !n.crash(victim, leader) || restart == 0 {
				return
			}
			s.At(s.Now()+restart, func() {
				if n.epoch != epoch || s.Up(victim) {
					return
				}
				if err := s.Restart(victim); err != nil {
					n.note("restart of replica %d failed: %v", victim, err)
					return
				}
				n.note("replica %d restarted", victim)
			})
		})
	}
}

// longPartition cuts a follower off from the other replicas (clients
// still reach it) for cutoff, with its clock running fast, up to the
// profile's drift: the log moves on past what the leader keeps, so the
// follower catches up by snapshot once reconnected. It keeps its fast
// clock until heal; half the time the leader, and perhaps other replicas
// up to f in all, then crash, so that it may be elected.
func (n *nemesis) longPartition(leader wire.NodeID, others []wire.NodeID, cutoff time.Duration) {
	s := n.s
	var followers []wire.NodeID
	for _, r := range others {
		if s.Up(r) && !s.Paused(r) {
			followers = append(followers, r)
		}
	}
	if len(followers) == 0 {
		return
	}
	f := followers[n.rng.IntN(len(followers))]
	rest := slices.DeleteFunc(slices.Clone(s.Replicas()), func(r wire.NodeID) bool { return r == f })
	rate := 1 + (n.prof.drift-1)*(0.5+0.5*n.rng.Float64())
	s.SetTickRate(f, rate)
	n.drifted = append(n.drifted, f)
	s.Partition([]wire.NodeID{f}, rest)
	n.note("follower %d cut off from the replicas for %v, clients still reach it; its clock now runs at %.2fx",
		f, cutoff.Round(time.Millisecond), rate)
	installed := s.Replica(f).Metrics().SnapshotsInstalled
	crashes := 0
	if n.rng.IntN(2) == 0 {
		crashes = 1 + n.rng.IntN((len(s.Replicas())-1)/2)
	}
	epoch := n.epoch
	s.At(s.Now()+cutoff, func() {
		if n.epoch != epoch {
			return
		}
		s.Reconnect([]wire.NodeID{f}, rest)
		n.longPartitions++
		n.note("follower %d reconnected", f)
		deadline := s.Now() + catchUp
		var wait func()
		wait = func() {
			if n.epoch != epoch || !s.Up(f) {
				return
			}
			got := s.Replica(f).Metrics().SnapshotsInstalled > installed
			if !got && s.Now() < deadline {
				s.At(s.Now()+20*time.Millisecond, wait)
				return
			}
			if got {
				n.bySnapshot++
				n.note("follower %d caught up by snapshot", f)
			} else {
				st, lead := s.Status(f), s.Leader()
				first := uint64(0)
				if lead != 0 {
					first = s.Replica(lead).Metrics().LogFirst
				}
				n.note("follower %d installed no snapshot within %v (it applied %d; leader %d's log starts at %d)",
					f, catchUp, st.Applied, lead, first)
			}
			for i := range crashes {
				victim := s.Leader()
				if i > 0 || victim == 0 || victim == f {
					victims := slices.DeleteFunc(slices.Clone(rest), func(r wire.NodeID) bool { return !s.Up(r) || s.Paused(r) })
					if len(victims) == 0 {
						return
					}
					victim = victims[n.rng.IntN(len(victims))]
				}
				n.crash(victim, s.Leader())
			}
		}
		wait()
	})
}

// TestLongPartitionsCatchUpBySnapshot: in the swarm seeds whose profile
// has long partitions, the cut-off follower catches up by snapshot, which
// its replica's count of installed snapshots shows: the compaction
// thresholds the profile sets are small enough that the leader's log no
// longer holds what the follower missed.
func TestLongPartitionsCatchUpBySnapshot(t *testing.T) {
	seeds := 12
	if testing.Short() || raceDetector {
		seeds = 4
	}
	for _, name := range []string{"curp-ho", "raft"} {
		for _, n := range []int{3, 5} {
			t.Run(fmt.Sprintf("%s/n=%d", name, n), func(t *testing.T) {
				var long, bySnapshot int
				for seed, left := uint64(1), seeds; left > 0; seed++ {
					if !drawProfile(seed, profileOptions{}).has(longPartition) {
						continue
					}
					left--
					res := checkedRun(t, name, n, seed, mutation{faults: true, swarm: true})
					long, bySnapshot = long+res.longPartitions, bySnapshot+res.bySnapshot
				}
				// A follower may also catch up from the log: when the
				// workload ended early in the partition, or no leader
				// was elected in time for it.
				require.NotZero(t, bySnapshot)
				require.GreaterOrEqual(t, 2*bySnapshot, long, "%d long partitions, %d caught up by snapshot", long, bySnapshot)
				t.Logf("%d long partitions, %d caught up by snapshot", long, bySnapshot)
			})
		}
	}
}

// TestRestartsKeepExpiredSessionsExactlyOnce replays the swarm seeds (with
// -swarm-expiry: small compaction thresholds, session expiry and an idle
// spell) that found a restarted replica pooling again the witness records
// of operations its snapshot had applied, whose sessions had expired: the
// leader logged them as stale records and applied them a second time,
// overwriting later writes (stale reads), though no fault lasted nearly
// the expiry. The witness log is now rewritten before each snapshot.
func TestRestartsKeepExpiredSessionsExactlyOnce(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		seeds []uint64
	}{
		{"curp-ho", 3, []uint64{104}},
		{"curp-ht", 5, []uint64{29, 50, 116}},
	} {
		for _, seed := range c.seeds {
			t.Run(fmt.Sprintf("%s/n=%d/seed=%d", c.name, c.n, seed), func(t *testing.T) {
				res := checkedRun(t, c.name, c.n, seed, mutation{faults: true, swarm: true, expiryProfile: true, firstKinds: true})
				require.NoError(t, res.Err)
				require.True(t, res.Clean(), "%v\nfaults:\n%s", res.Violations, res.faults)
			})
		}
	}
}

// TestHOPendingWeakWriteKeepsItsResult replays the swarm seed that found a
// CURP-HO client resending a weak write for good (N = 5, seed 166, a
// 4.326 s expiry): a strong operation of its session completed through the
// log while the write still awaited its acknowledgement, and the client,
// taking the write as committed, released it, so the replicas forgot its
// result and the leader stopped answering its resends. The next resend put
// it back among the session's uncommitted writes, the bound replica's
// acknowledgement held it there, and once the session had idled past the
// expiry a resend was logged and applied a second time (X1), with no fault
// lasting anywhere near the expiry. A write awaiting its reply now stays
// in flight until one completes it.
func TestHOPendingWeakWriteKeepsItsResult(t *testing.T) {
	res := checkedRun(t, "curp-ho", 5, 166, mutation{faults: true, swarm: true, firstKinds: true})
	require.NoError(t, res.Err)
	require.True(t, res.Clean(), "%v\nfaults:\n%s", res.Violations, res.faults)
}

// TestSwarmExpiryOutlastsEveryFault: whenever a swarm profile expires
// sessions, the expiry outlasts the profile's longest fault by the margin
// the documented fault bound asks; seed 738 was drawn without it.
func TestSwarmExpiryOutlastsEveryFault(t *testing.T) {
	for _, o := range []profileOptions{{}, {powerCuts: true}, {expiry: true}} {
		for seed := uint64(1); seed <= 20000; seed++ {
			p := drawProfile(seed, o)
			if p.sessionExpiry == 0 {
				continue
			}
			require.GreaterOrEqual(t, p.sessionExpiry, p.maxFault()+expiryMargin, "seed %d %+v: %v", seed, o, p)
			if p.idle > 0 {
				require.Greater(t, p.idle, p.sessionExpiry, "seed %d %+v: an idle spell shorter than the expiry", seed, o)
			}
		}
	}
}
