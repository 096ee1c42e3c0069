package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/round"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// ReplicaFactory builds a replica core.
type ReplicaFactory func(cfg coreconfig.Config) (protocol.Replica, error)

// ClientFactory builds a client core for a client process.
type ClientFactory func(id wire.NodeID, replicas []wire.NodeID, site uint32) clientcore.Core

// Network describes the virtual network.
type Network struct {
	// OneWay[i][j] is the one-way delay from site i to site j.
	OneWay [][]time.Duration
	// Jitter adds a uniform [0, Jitter) to every delay.
	Jitter time.Duration
	// Drop and Duplicate are per-message probabilities.
	Drop, Duplicate float64
}

// Config describes a simulated cluster.
type Config struct {
	Seed     uint64
	Replicas int
	// ReplicaSites[i] is the site of replica i+1 (default: site i).
	ReplicaSites []uint32
	Network      Network
	// Tick defaults to the deployed tick; ElectionTicks and
	// HeartbeatTicks to shorter timeouts than deployed (see
	// simElectionTicks).
	Tick                          time.Duration
	BatchDelay                    time.Duration // 0 flushes after every step
	ElectionTicks, HeartbeatTicks int
	// DiskLatency is how long a replica's disk takes to make a write
	// durable, from when its writer takes the rounds waiting: each write
	// takes a time drawn uniformly from [DiskLatency/2, 3*DiskLatency/2).
	// Default 1ms; negative makes every write durable at once, at the end
	// of the round that made it.
	DiskLatency time.Duration
	// VolatileWitnesses keeps CURP witness records in memory only, so a
	// crash loses them (the protocol then relies on witness replacement).
	VolatileWitnesses bool
	// SessionExpiry is how long a session may apply nothing before the
	// replicas forget it; zero keeps every session.
	SessionExpiry time.Duration
	// CompactEvery, CompactKeep and MemoryKeep, when set, replace the
	// replicas' log compaction thresholds (coreconfig.Config's): small
	// ones make a run's replicas snapshot their state, and a follower that
	// lags behind more than MemoryKeep entries catch up by snapshot.
	CompactEvery, CompactKeep, MemoryKeep uint64
	// Rounds says how a node's loop gathers the messages it receives
	// into rounds; the zero value steps each message in a round of its
	// own.
	Rounds Rounds

	NewReplica ReplicaFactory
	NewClient  ClientFactory
}

// Rounds says how the simulated loops gather messages into rounds: a
// received message waits for a round that starts within Window (drawn
// from the seed for each round), and the round takes what waits within
// Limits, as protocol.Loop does for package node. Logic that runs once
// a round (a replica's settling of weak reads, a client's fast-path
// count) then sees several messages at once, in varying numbers. A zero
// Window steps each message in a round of its own, at once.
type Rounds struct {
	Window time.Duration
	// Limits default to round.Deployed.
	Limits round.Limits
}

func (r Rounds) String() string {
	if r.Window <= 0 {
		return "rounds of one message"
	}
	return fmt.Sprintf("rounds within %v, at most %d clients' messages, %d at a time", r.Window, r.Limits.Clients, r.Limits.Chunk)
}

// The simulator's timing is the deployed configuration's (config.Default:
// its tick, batch delay left to the caller) but for leader election: a
// deployed cluster waits 50 ticks before campaigning and heartbeats every
// 5, about ten and one round trips of its 25 ms WAN, so that a leader busy
// snapshotting is not deposed. A simulated run waits 10 and heartbeats
// every tick: its faults last hundreds of milliseconds of virtual time,
// and with the deployed timeouts a run would mostly wait for elections
// instead of going through several. Tests that need the deployed timing
// set ElectionTicks and HeartbeatTicks.
const (
	simElectionTicks  = 10
	simHeartbeatTicks = 1
)

// Sim is a simulated cluster. Not safe for concurrent use.
type Sim struct {
	cfg    Config
	rand   *rand.Rand
	now    time.Duration
	seq    uint64
	events eventHeap

	replicas []wire.NodeID
	nodes    map[wire.NodeID]*node
	// lastDelivery keeps per-pair FIFO order.
	lastDelivery map[[2]wire.NodeID]time.Duration
	blocked      map[[2]wire.NodeID]bool
	// slow adds delay to a link, one way; lossy drops a share of its
	// messages.
	slow  map[[2]wire.NodeID]time.Duration
	lossy map[[2]wire.NodeID]float64

	// OnComplete is called for every completion of a client core.
	OnComplete func(client wire.NodeID, c clientcore.Completion)
	// OnDeliver, when set, is called for every message as it reaches a
	// running node, before the node's round takes it.
	OnDeliver func(from, to wire.NodeID, m wire.Message)
	// OnLoop, when set, is called for what a replica's driver decides: a
	// round and what woke it, its disk taking the writes waiting, the
	// write done. With OnDeliver it is everything the replica's loop was
	// handed, in order, so that a test can hand another driver the same.
	OnLoop func(id wire.NodeID, step LoopStep)

	Stats Stats
}

// Stats counts what the network did.
type Stats struct {
	Sent, Delivered, Dropped, Duplicated int
}

type node struct {
	id      wire.NodeID
	site    uint32
	up      bool
	replica protocol.Replica
	client  clientcore.Core
	// inbox holds what the node received for its next round; loop is a
	// replica's round (see protocol.Loop).
	inbox *round.Inbox
	loop  *protocol.Loop
	// roundArmed: a round is scheduled for what the inbox holds.
	roundArmed bool
	// disk and records are a replica's: they outlive its crashes.
	disk    *raftlog.MemDisk
	records *witness.MemLog
	// generation invalidates timers of a crashed incarnation.
	generation int
	// paused nodes run nothing: what arrives and their timers wait in
	// deferred until Resume, as with a SIGSTOPped process.
	paused   bool
	deferred []*event
	// tick is this node's tick period: clocks drift, so tick rates differ.
	tick time.Duration
	// writing is the batch of the loop's Writes the disk is working on,
	// if busy.
	writing protocol.Batch
	busy    bool
}

// New builds a cluster of replicas 1..N, started and bootstrapped.
func New(cfg Config) (*Sim, error) {
	deployed := config.Default().Raft
	if cfg.Tick == 0 {
		cfg.Tick = deployed.Tick()
	}
	if cfg.ElectionTicks == 0 {
		cfg.ElectionTicks = simElectionTicks
	}
	if cfg.HeartbeatTicks == 0 {
		cfg.HeartbeatTicks = simHeartbeatTicks
	}
	if cfg.DiskLatency == 0 {
		cfg.DiskLatency = time.Millisecond
	}
	if cfg.Rounds.Limits == (round.Limits{}) {
		cfg.Rounds.Limits = round.Deployed
	}
	s := &Sim{
		cfg:          cfg,
		rand:         rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		nodes:        make(map[wire.NodeID]*node),
		lastDelivery: make(map[[2]wire.NodeID]time.Duration),
		blocked:      make(map[[2]wire.NodeID]bool),
		slow:         make(map[[2]wire.NodeID]time.Duration),
		lossy:        make(map[[2]wire.NodeID]float64),
	}
	for i := 1; i <= cfg.Replicas; i++ {
		s.replicas = append(s.replicas, wire.NodeID(i))
	}
	for _, id := range s.replicas {
		site := uint32(id - 1)
		if int(id-1) < len(cfg.ReplicaSites) {
			site = cfg.ReplicaSites[id-1]
		}
		n := &node{id: id, site: site, disk: raftlog.NewMemDisk()}
		if !cfg.VolatileWitnesses {
			n.records = new(witness.MemLog)
		}
		s.nodes[id] = n
		if err := s.startReplica(n); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Replicas returns the replica IDs.
func (s *Sim) Replicas() []wire.NodeID { return s.replicas }

// Now returns the virtual time.
func (s *Sim) Now() time.Duration { return s.now }

// Rand is the simulation's seeded source, for workloads that want to stay
// reproducible with the run.
func (s *Sim) Rand() *rand.Rand { return s.rand }

// startReplica starts a replica on its disk, bootstrapping the cluster if
// the disk is blank, as `hybridkv cluster` does on a first start.
func (s *Sim) startReplica(n *node) error {
	cfg := coreconfig.Config{
		ID:             n.id,
		Peers:          s.replicas,
		ElectionTicks:  s.cfg.ElectionTicks,
		HeartbeatTicks: s.cfg.HeartbeatTicks,
		Rand:           rand.New(rand.NewPCG(s.rand.Uint64(), uint64(n.id))),
		Disk:           n.disk,
		Bootstrap:      n.generation == 0,

		SessionExpiryTicks: int(s.cfg.SessionExpiry / s.cfg.Tick),
		CompactEvery:       s.cfg.CompactEvery,
		CompactKeep:        s.cfg.CompactKeep,
		MemoryKeep:         s.cfg.MemoryKeep,
	}
	if n.records != nil {
		cfg.Records = n.records
	}
	core, err := s.cfg.NewReplica(cfg)
	if err != nil {
		return fmt.Errorf("sim: start replica %d: %w", n.id, err)
	}
	n.replica, n.up = core, true
	n.inbox = round.NewInbox()
	n.loop = &protocol.Loop{Core: core, Inbox: n.inbox, Limits: s.cfg.Rounds.Limits, BatchDelay: s.cfg.BatchDelay,
		Self: n.id, Send: func(envs []wire.Envelope) {
			for _, env := range envs {
				s.send(n, env)
			}
		}}
	n.roundArmed = false
	n.generation++
	s.startTimers(n)
	return nil
}

// Clients returns the client processes, in the order added.
func (s *Sim) Clients() []wire.NodeID {
	var ids []wire.NodeID
	for id, n := range s.nodes {
		if n.client != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Site returns the site of a replica or client.
func (s *Sim) Site(id wire.NodeID) uint32 { return s.nodes[id].site }

// AddClient starts a client process at a site and returns its ID.
func (s *Sim) AddClient(site uint32) wire.NodeID {
	id := wire.FirstClientID + wire.NodeID(len(s.nodes))
	n := &node{id: id, site: site, up: true, inbox: round.NewInbox()}
	n.client = s.cfg.NewClient(id, s.replicas, site)
	s.nodes[id] = n
	n.generation++
	s.startTimers(n)
	return id
}

func (s *Sim) startTimers(n *node) {
	if n.tick == 0 {
		n.tick = s.cfg.Tick
	}
	phase := time.Duration(s.rand.Int64N(int64(n.tick)))
	s.schedule(phase, &event{kind: evTick, node: n.id, gen: n.generation})
}

// Submit starts an operation on a client's core.
func (s *Sim) Submit(client wire.NodeID, session uint64, op wire.Op) wire.OpID {
	n := s.nodes[client]
	id := n.client.Submit(session, op)
	s.drain(n)
	return id
}

// Crash stops a replica as a power cut would: its memory is gone, and its
// disk keeps only what was synced.
func (s *Sim) Crash(id wire.NodeID) {
	n := s.nodes[id]
	n.up = false
	n.generation++
	if n.loop != nil {
		n.loop.Writes.Clear()
	}
	n.busy = false
	n.disk.Crash()
	if n.records != nil {
		n.records.Crash()
	}
}

// Restart brings a crashed replica back on what its disk kept, through the
// same load path a replica process takes.
func (s *Sim) Restart(id wire.NodeID) error {
	return s.startReplica(s.nodes[id])
}

// LoseDisk replaces a crashed replica's disk with a blank one, as a disk
// failure would; Restart is then refused.
func (s *Sim) LoseDisk(id wire.NodeID) {
	n := s.nodes[id]
	n.disk = raftlog.NewMemDisk()
	if n.records != nil {
		n.records = new(witness.MemLog)
	}
}

// Disk returns a replica's disk.
func (s *Sim) Disk(id wire.NodeID) *raftlog.MemDisk { return s.nodes[id].disk }

// Records returns a replica's witness log, nil if it keeps none.
func (s *Sim) Records(id wire.NodeID) *witness.MemLog { return s.nodes[id].records }

// Pause stops a node as SIGSTOP would: it handles nothing, and its timers
// do not fire, until Resume.
func (s *Sim) Pause(id wire.NodeID) { s.nodes[id].paused = true }

// Paused reports whether a node is paused.
func (s *Sim) Paused(id wire.NodeID) bool { return s.nodes[id].paused }

// Resume continues a paused node: what arrived meanwhile is delivered now,
// in arrival order, and its timers go on from now.
func (s *Sim) Resume(id wire.NodeID) {
	n := s.nodes[id]
	n.paused = false
	for _, e := range n.deferred {
		s.scheduleAt(s.now, e)
	}
	n.deferred = nil
}

// Partition blocks traffic in both directions between the two groups.
func (s *Sim) Partition(a, b []wire.NodeID) {
	for _, x := range a {
		for _, y := range b {
			s.blocked[[2]wire.NodeID{x, y}] = true
			s.blocked[[2]wire.NodeID{y, x}] = true
		}
	}
}

// Block drops traffic from every node of from to every node of to, one way.
func (s *Sim) Block(from, to []wire.NodeID) {
	for _, x := range from {
		for _, y := range to {
			s.blocked[[2]wire.NodeID{x, y}] = true
		}
	}
}

// Reconnect lifts the blocks between the two groups, both ways, that
// Partition or Block put: other blocks, slow links and lossy links stay.
func (s *Sim) Reconnect(a, b []wire.NodeID) {
	for _, x := range a {
		for _, y := range b {
			delete(s.blocked, [2]wire.NodeID{x, y})
			delete(s.blocked, [2]wire.NodeID{y, x})
		}
	}
}

// SlowLink adds extra delay to every message from a to b.
func (s *Sim) SlowLink(a, b wire.NodeID, extra time.Duration) {
	s.slow[[2]wire.NodeID{a, b}] = extra
}

// LossyLink drops each message from a to b with probability p, on top of
// the network's own loss; the other way is left as it is.
func (s *Sim) LossyLink(a, b wire.NodeID, p float64) {
	s.lossy[[2]wire.NodeID{a, b}] = p
}

// SetTickRate makes a node's clock run at factor times the configured tick
// rate (1.1: ticks come 10 % more often), from its next tick on.
func (s *Sim) SetTickRate(id wire.NodeID, factor float64) {
	s.nodes[id].tick = time.Duration(float64(s.cfg.Tick) / factor)
}

// Heal removes every partition, one-way block, slow link and lossy link.
func (s *Sim) Heal() {
	clear(s.blocked)
	clear(s.slow)
	clear(s.lossy)
}

// Status returns a replica's status (its last incarnation's, if down).
func (s *Sim) Status(id wire.NodeID) protocol.Status { return s.nodes[id].replica.Status() }

// Up reports whether a replica runs.
func (s *Sim) Up(id wire.NodeID) bool { return s.nodes[id].up }

// Replica returns a replica's core.
func (s *Sim) Replica(id wire.NodeID) protocol.Replica { return s.nodes[id].replica }

// Leader returns the replica that leads in the highest term any running
// replica knows, or 0.
func (s *Sim) Leader() wire.NodeID {
	var best protocol.Status
	for _, id := range s.replicas {
		if !s.nodes[id].up {
			continue
		}
		st := s.nodes[id].replica.Status()
		if st.Leader == id && st.Term >= best.Term {
			best = st
		}
	}
	return best.Leader
}

// RunFor advances virtual time by d.
func (s *Sim) RunFor(d time.Duration) { s.RunUntil(func() bool { return false }, d) }

// RunUntil runs until cond holds (checked after every event) or d of
// virtual time passed; it reports whether cond held.
func (s *Sim) RunUntil(cond func() bool, d time.Duration) bool {
	end := s.now + d
	for len(s.events) > 0 && s.events[0].at <= end {
		e := heap.Pop(&s.events).(*event)
		s.now = e.at
		s.handle(e)
		if cond() {
			return true
		}
	}
	s.now = end
	return cond()
}

func (s *Sim) handle(e *event) {
	if e.kind == evCall {
		e.call()
		return
	}
	n := s.nodes[e.node]
	if n == nil || !n.up {
		return
	}
	if n.paused {
		n.deferred = append(n.deferred, e)
		return
	}
	switch e.kind {
	case evDeliver:
		s.deliver(n, e)
	case evTick:
		if e.gen != n.generation {
			return
		}
		s.schedule(n.tick, e)
		s.runRound(n, protocol.Event{Ticks: 1})
	case evFlush:
		if e.gen != n.generation {
			return
		}
		s.runRound(n, protocol.Event{BatchDue: true})
	case evWritten:
		if e.gen != n.generation {
			return
		}
		s.written(n)
	case evRound:
		if e.gen != n.generation {
			return
		}
		n.roundArmed = false
		s.runRound(n, protocol.Event{})
	}
}

// runRound runs one round of a node's loop: what package node does
// when woken (protocol.Loop), or the client library's loop.
func (s *Sim) runRound(n *node, ev protocol.Event) {
	if n.replica == nil {
		for range ev.Ticks {
			n.client.Tick()
		}
		round.Take(n.inbox, round.Unlimited, nil, n.client.Step)
		s.drain(n)
		return
	}
	s.onLoop(n, LoopStep{Kind: Round, Event: ev})
	arm, writing := n.loop.Round(ev, nil)
	if arm {
		s.schedule(s.cfg.BatchDelay, &event{kind: evFlush, node: n.id, gen: n.generation})
	}
	if writing {
		s.startWrite(n)
	}
	if n.inbox.Len() > 0 {
		s.armRound(n) // the round left messages waiting
	}
}

// armRound schedules a round for what the node's inbox holds, within the
// configured window, unless one is scheduled.
func (s *Sim) armRound(n *node) {
	if n.roundArmed {
		return
	}
	n.roundArmed = true
	var after time.Duration
	if w := s.cfg.Rounds.Window; w > 0 {
		after = time.Duration(s.rand.Int64N(int64(w)))
	}
	s.schedule(after, &event{kind: evRound, node: n.id, gen: n.generation})
}

func (s *Sim) deliver(n *node, e *event) {
	m, err := wire.Decode(e.payload)
	if err != nil {
		panic(fmt.Sprintf("sim: message from %d to %d does not decode: %v", e.from, n.id, err))
	}
	s.Stats.Delivered++
	if s.OnDeliver != nil {
		s.OnDeliver(e.from, n.id, m)
	}
	n.inbox.Put(e.from, m)
	if s.cfg.Rounds.Window <= 0 {
		s.runRound(n, protocol.Event{})
		return
	}
	s.armRound(n)
}

// drain collects what a client core produced and puts it on the network.
func (s *Sim) drain(n *node) {
	out, done := n.client.Ready()
	for _, env := range out {
		s.send(n, env)
	}
	// Completion callbacks may submit, which re-enters drain: hand the core
	// its buffers back first.
	done = append([]clientcore.Completion(nil), done...)
	n.client.Advance()
	for _, c := range done {
		if s.OnComplete != nil {
			s.OnComplete(n.id, c)
		}
	}
}

// startWrite has an idle disk take the rounds waiting, as the node's
// writer does.
func (s *Sim) startWrite(n *node) {
	if n.busy {
		return
	}
	b, ok := n.loop.Writes.Take()
	if !ok {
		return
	}
	n.writing, n.busy = b, true
	s.onLoop(n, LoopStep{Kind: WriteTaken})
	if s.cfg.DiskLatency < 0 {
		s.written(n)
		return
	}
	took := s.cfg.DiskLatency/2 + time.Duration(s.rand.Int64N(int64(s.cfg.DiskLatency)))
	s.schedule(took, &event{kind: evWritten, node: n.id, gen: n.generation})
}

// written finishes the disk's batch: the write is durable, so what waited
// for it goes out (Loop.Written), and a round runs at once for raft's news
// to the replica itself, as the node's loop wakes for it.
func (s *Sim) written(n *node) {
	b := n.writing
	n.writing, n.busy = protocol.Batch{}, false
	s.onLoop(n, LoopStep{Kind: WriteDone})
	if b.Write != nil {
		if err := b.Write.Do(); err != nil {
			panic(fmt.Sprintf("sim: replica %d: disk write: %v", n.id, err))
		}
	}
	n.loop.Written(b)
	s.runRound(n, protocol.Event{}) // starts the next write
}

func (s *Sim) send(from *node, env wire.Envelope) {
	s.Stats.Sent++
	to := s.nodes[env.To]
	link := [2]wire.NodeID{from.id, env.To}
	if to == nil || s.blocked[link] || s.chance(s.cfg.Network.Drop) || s.chance(s.lossy[link]) {
		s.Stats.Dropped++
		return
	}
	payload := wire.Append(nil, env.Msg)
	copies := 1
	if s.chance(s.cfg.Network.Duplicate) {
		copies = 2
		s.Stats.Duplicated++
	}
	for range copies {
		at := s.now + s.delay(from.site, to.site) + s.slow[[2]wire.NodeID{from.id, env.To}]
		key := [2]wire.NodeID{from.id, env.To}
		at = max(at, s.lastDelivery[key])
		s.lastDelivery[key] = at
		s.scheduleAt(at, &event{kind: evDeliver, node: env.To, from: from.id, payload: payload})
	}
}

func (s *Sim) chance(p float64) bool { return p > 0 && s.rand.Float64() < p }

func (s *Sim) delay(a, b uint32) time.Duration {
	var d time.Duration
	if m := s.cfg.Network.OneWay; int(a) < len(m) && int(b) < len(m[a]) {
		d = m[a][b]
	}
	if j := s.cfg.Network.Jitter; j > 0 {
		d += time.Duration(s.rand.Int64N(int64(j)))
	}
	return d
}

func (s *Sim) schedule(after time.Duration, e *event) { s.scheduleAt(s.now+after, e) }

func (s *Sim) scheduleAt(at time.Duration, e *event) {
	s.seq++
	e.at, e.seq = at, s.seq
	heap.Push(&s.events, e)
}

// At runs fn at virtual time at (now, if at has passed), between events.
func (s *Sim) At(at time.Duration, fn func()) {
	s.scheduleAt(max(at, s.now), &event{kind: evCall, call: fn})
}

// Inject delivers m from node from to node to now, as if it had been sent:
// for tests that replay a message, such as a client's late retry.
func (s *Sim) Inject(from, to wire.NodeID, m wire.Message) {
	s.scheduleAt(s.now, &event{kind: evDeliver, node: to, from: from, payload: wire.Append(nil, m)})
}

// UniformWAN is a delay matrix of n sites, oneWay apart, zero within a site.
func UniformWAN(n int, oneWay time.Duration) [][]time.Duration {
	m := make([][]time.Duration, n)
	for i := range m {
		m[i] = make([]time.Duration, n)
		for j := range m[i] {
			if i != j {
				m[i][j] = oneWay
			}
		}
	}
	return m
}

// Sites lists site indexes 0..n-1, one client per site.
func Sites(n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = uint32(i)
	}
	return s
}
