package node_test

import (
	"context"
	"flag"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/node"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/transport"
	"github.com/hybridkv/hybridkv/internal/wire"
)

const (
	replicaID = wire.NodeID(1)
	clientID  = wire.FirstClientID + 1
)

// fakeCore answers every request it is handed once the batch holding it is
// flushed, and reports its tick count as the term, so tests can watch the
// loop drive it from outside.
type fakeCore struct {
	mu      sync.Mutex
	ticks   int
	flushes int
	stepAt  time.Time // when the first request was stepped
	flushAt time.Time // first flush after stepAt
	batch   []wire.Envelope
	out     []wire.Envelope
	// proposeEvery makes Tick gather a proposal; proposed counts them and
	// sent counts the envelopes the driver took.
	proposeEvery   int
	proposed, sent int
	// slowDisk, when set, makes every round with output a write that
	// waits for it, its replies and a note to the core itself coming after;
	// fromSelf counts the notes stepped back.
	slowDisk *gate
	fromSelf int
	// clientCost is the time each client request takes to step (a busy
	// wait); clientSteps counts the client requests stepped, and tickSteps
	// holds that count at each tick.
	clientCost  time.Duration
	clientSteps int
	tickSteps   []int
}

// gate is a disk sync that takes as long as a test wants: it reports its
// start and returns once opened.
type gate struct {
	started chan struct{}
	open    chan struct{}
	syncs   atomic.Int32
}

func newGate() *gate { return &gate{started: make(chan struct{}, 1), open: make(chan struct{})} }

func (g *gate) Sync() error {
	g.syncs.Add(1)
	select {
	case g.started <- struct{}{}:
	default:
	}
	<-g.open
	return nil
}

func (c *fakeCore) Step(from wire.NodeID, m wire.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if from == replicaID {
		c.fromSelf++
	}
	req, ok := m.(*wire.Request)
	if !ok {
		return
	}
	if c.stepAt.IsZero() {
		c.stepAt = time.Now()
	}
	if from.IsClient() {
		c.clientSteps++
	}
	for start := time.Now(); time.Since(start) < c.clientCost; {
	}
	c.batch = append(c.batch, wire.Envelope{To: from, Msg: &wire.Reply{
		Kind: wire.ReplySync, ID: req.Op.ID, Leader: replicaID, Found: true, Value: req.Op.Value,
	}})
}

// Tick gathers a proposal of its own every proposeEvery ticks (when set),
// as a new leader's replay does: nothing but the core contract tells the
// driver to flush it.
func (c *fakeCore) Tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ticks++
	c.tickSteps = append(c.tickSteps, c.clientSteps)
	if c.proposeEvery > 0 && c.ticks%c.proposeEvery == 0 {
		c.batch = append(c.batch, wire.Envelope{To: clientID, Msg: &wire.Reply{Kind: wire.ReplySync}})
		c.proposed++
	}
}

func (c *fakeCore) Pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.batch) > 0
}

func (c *fakeCore) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushes++
	if len(c.batch) > 0 && c.flushAt.IsZero() {
		c.flushAt = time.Now()
	}
	c.out = append(c.out, c.batch...)
	c.batch = c.batch[:0]
}

func (c *fakeCore) Ready() protocol.Ready {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slowDisk == nil || len(c.out) == 0 {
		return protocol.Ready{Messages: c.out}
	}
	after := append([]wire.Envelope(nil), c.out...)
	after = append(after, wire.Envelope{To: replicaID, Msg: &wire.Reply{Kind: wire.ReplySync}})
	return protocol.Ready{Write: (*raftlog.Write)(nil).Also(c.slowDisk), After: after}
}

func (c *fakeCore) Advance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent += len(c.out)
	c.out = nil
}

func (c *fakeCore) Status() protocol.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return protocol.Status{ID: replicaID, Leader: replicaID, Term: uint64(c.ticks)}
}

func (c *fakeCore) Metrics() protocol.Metrics {
	c.mu.Lock()
	defer c.mu.Unlock()
	return protocol.Metrics{Status: protocol.Status{ID: replicaID, Leader: replicaID, Term: uint64(c.ticks)},
		Batch: len(c.batch)}
}

func (c *fakeCore) tickCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ticks
}

func newFakeReplica(t *testing.T, core *fakeCore, batchDelay time.Duration) *node.Node {
	t.Helper()
	return newFakeReplicaWith(t, core, node.Config{BatchDelay: batchDelay})
}

// newFakeReplicaWith runs core with cfg's delays.
func newFakeReplicaWith(t *testing.T, core *fakeCore, cfg node.Config) *node.Node {
	t.Helper()
	cfg.Core = core
	cfg.Transport = transport.Config{Self: replicaID, Listen: "127.0.0.1:0"}
	cfg.Tick = 5 * time.Millisecond
	r, err := node.New(cfg)
	require.NoError(t, err)
	return r
}

// dialClient connects a client to r; its replies come on the channel. The
// caller closes the client.
func dialClient(t *testing.T, r *node.Node) (*transport.Transport, <-chan *wire.Reply) {
	t.Helper()
	replies := make(chan *wire.Reply, 16)
	cl, err := transport.New(transport.Config{
		Self:  clientID,
		Peers: map[wire.NodeID]transport.Peer{replicaID: {Addr: r.Transport().Addr().String()}},
	}, func(_ wire.NodeID, m wire.Message) {
		if rep, ok := m.(*wire.Reply); ok {
			replies <- rep
		}
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return cl.Connected(replicaID) }, 2*time.Second, time.Millisecond)
	return cl, replies
}

// run starts r and returns a function that stops it and waits for Run's
// result.
func run(t *testing.T, r *node.Node) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- r.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-res:
			case <-time.After(2 * time.Second):
				t.Fatal("Run did not return after its context was cancelled")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReplicaRunStops(t *testing.T) {
	tests := []struct {
		name       string
		batchDelay time.Duration
		// running lets the loop tick before the context ends.
		running bool
	}{
		{"cancelled at once", 0, false},
		{"cancelled while running", 0, true},
		{"cancelled with a batch timer", 20 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			core := &fakeCore{}
			r := newFakeReplica(t, core, tt.batchDelay)
			addr := r.Transport().Addr().String()
			stop := run(t, r)
			if tt.running {
				require.Eventually(t, func() bool { return core.tickCount() >= 3 }, 2*time.Second, time.Millisecond)
			}
			require.NoError(t, stop())

			ticks := core.tickCount()
			time.Sleep(20 * time.Millisecond)
			require.Equal(t, ticks, core.tickCount(), "the core is still being ticked")
			_, err := net.DialTimeout("tcp", addr, time.Second)
			require.Error(t, err, "the transport still listens")
		})
	}
}

// TestReplicaRunServesRequests checks the whole loop: a request read by the
// transport reaches the core, is flushed after the batch delay, and what the
// core emits goes back out to the client.
func TestReplicaRunServesRequests(t *testing.T) {
	tests := []struct {
		name       string
		batchDelay time.Duration
	}{
		{"no batch delay", 0},
		{"batch delay", 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core := &fakeCore{}
			r := newFakeReplica(t, core, tt.batchDelay)
			run(t, r)

			cl, replies := dialClient(t, r)
			t.Cleanup(func() { cl.Close() })

			req := &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 7, Seq: 1}, Kind: wire.Put, Value: []byte("v")}}
			cl.Send(replicaID, req)
			select {
			case rep := <-replies:
				require.Equal(t, req.Op.ID, rep.ID)
				require.Equal(t, []byte("v"), rep.Value)
			case <-time.After(2 * time.Second):
				t.Fatal("no reply")
			}

			core.mu.Lock()
			defer core.mu.Unlock()
			require.False(t, core.flushAt.IsZero())
			require.GreaterOrEqual(t, core.flushAt.Sub(core.stepAt), tt.batchDelay,
				"the batch was flushed before its delay expired")
		})
	}
}

// TestClientFloodDoesNotHoldBackTicks: a flood of client requests that are
// each expensive to step (200 µs) must not stretch a round: the loop takes
// a tick, and sends what the core has for its peers, only between rounds,
// so a leader's heartbeats and a follower's acknowledgements and votes
// would wait behind the flood. 3,000 such requests are 600 ms of work; with
// rounds bounded by count alone, nearly all of them made one round, with no
// tick in between. A round ends at the chunk (16 requests) that spends its
// 5 ms, so it steps at most 32 of them; it lasts longer than the 5 ms
// tick, so every round finds a tick due, and takes it: at most 32 requests
// between two ticks, 96 allowed. With the tick left to select's draw
// against the always-ready inbox, 20 runs saw 128 to 480. Counted in
// requests, not in time, so a machine busy with other work does not fail
// the test (20 runs beside four spinning processes: 32 to 48).
func TestClientFloodDoesNotHoldBackTicks(t *testing.T) {
	core := &fakeCore{clientCost: 200 * time.Microsecond}
	r := newFakeReplica(t, core, 0)
	run(t, r)
	cl, replies := dialClient(t, r)
	t.Cleanup(func() { cl.Close() })

	const n = 3000
	for i := range n {
		cl.Send(replicaID, &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 7, Seq: uint64(i + 1)}, Kind: wire.Get}})
	}
	for i := range n {
		select {
		case <-replies:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d replies of %d", i, n)
		}
	}

	core.mu.Lock()
	defer core.mu.Unlock()
	require.Equal(t, n, core.clientSteps)
	most, prev := 0, 0
	for _, steps := range append(core.tickSteps, core.clientSteps) {
		most = max(most, steps-prev)
		prev = steps
	}
	require.LessOrEqual(t, most, 3*32,
		"the loop stepped %d client requests without a tick in between", most)
}

// TestSlowDiskDoesNotStopTheLoop: while a write syncs, the loop goes on
// (it keeps ticking the core) and what waited for the write stays back;
// once the write is done, the reply goes to the client and the note
// addressed to the replica itself is stepped into its core.
func TestSlowDiskDoesNotStopTheLoop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	core := &fakeCore{slowDisk: newGate()}
	r := newFakeReplica(t, core, 0)
	stop := run(t, r)

	cl, replies := dialClient(t, r)
	defer cl.Close()

	cl.Send(replicaID, &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 7, Seq: 1}, Kind: wire.Put}})
	select {
	case <-core.slowDisk.started:
	case <-time.After(2 * time.Second):
		t.Fatal("the write never started")
	}
	ticks := core.tickCount()
	select {
	case <-replies:
		t.Fatal("a reply left before the write it waited for was done")
	case <-time.After(100 * time.Millisecond):
	}
	require.Greater(t, core.tickCount(), ticks+5, "the loop stopped while the disk synced")

	close(core.slowDisk.open)
	select {
	case <-replies:
	case <-time.After(2 * time.Second):
		t.Fatal("no reply once the write was done")
	}
	require.Eventually(t, func() bool {
		core.mu.Lock()
		defer core.mu.Unlock()
		return core.fromSelf == 1
	}, 2*time.Second, time.Millisecond, "the note to the replica itself did not reach its core")
	require.NoError(t, stop())
}

// TestSyncDelayGathersRoundsOnlyUnderLoad: rounds that queued up behind a
// write wait SyncDelay, and rounds that come meanwhile share their sync; a
// write that finds the writer idle goes at once.
func TestSyncDelayGathersRoundsOnlyUnderLoad(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const delay = 400 * time.Millisecond
	core := &fakeCore{slowDisk: newGate()}
	r := newFakeReplicaWith(t, core, node.Config{SyncDelay: delay})
	stop := run(t, r)
	cl, replies := dialClient(t, r)
	defer cl.Close()
	send := func(seq uint64) {
		cl.Send(replicaID, &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 7, Seq: seq}, Kind: wire.Put}})
	}
	next := func(within time.Duration) time.Time {
		t.Helper()
		select {
		case <-replies:
			return time.Now()
		case <-time.After(within):
			t.Fatalf("no reply within %v", within)
			return time.Time{}
		}
	}

	send(1)
	select {
	case <-core.slowDisk.started:
	case <-time.After(2 * time.Second):
		t.Fatal("the first write never started")
	}
	send(2) // two rounds queue up behind the first write
	time.Sleep(30 * time.Millisecond)
	send(3)
	time.Sleep(30 * time.Millisecond)
	opened := time.Now()
	close(core.slowDisk.open)
	require.Less(t, next(2*time.Second).Sub(opened), delay/2, "the first write's reply waited")
	time.Sleep(delay / 4)
	send(4) // comes while the writer waits
	for range 3 {
		require.GreaterOrEqual(t, next(5*time.Second).Sub(opened), delay*3/4,
			"rounds that queued behind a write did not wait for others")
	}
	require.EqualValues(t, 2, core.slowDisk.syncs.Load(), "the rounds that queued and the one that came meanwhile did not share one sync")

	time.Sleep(delay / 4)
	sent := time.Now()
	send(5) // the writer is idle again
	require.Less(t, next(2*time.Second).Sub(sent), delay/2, "a write on an idle writer waited")
	require.EqualValues(t, 3, core.slowDisk.syncs.Load())
	require.NoError(t, stop())
}

// TestReplicaFlushesProposalsMadeOutsideRequests: a core that gathers
// operations on its own (a new leader's replay) has them flushed although no
// client request arrives, with and without a batch delay.
func TestReplicaFlushesProposalsMadeOutsideRequests(t *testing.T) {
	for _, delay := range []time.Duration{0, 20 * time.Millisecond} {
		core := &fakeCore{proposeEvery: 2}
		r := newFakeReplica(t, core, delay)
		run(t, r)
		require.Eventually(t, func() bool {
			core.mu.Lock()
			defer core.mu.Unlock()
			return core.proposed >= 3 && core.flushes >= 3 && core.sent >= 3
		}, 2*time.Second, time.Millisecond, "batch delay %v: proposals stayed unflushed", delay)
	}
}

func TestReplicaStatusFollowsCore(t *testing.T) {
	core := &fakeCore{}
	r := newFakeReplica(t, core, 0)
	require.Equal(t, protocol.Status{ID: replicaID, Leader: replicaID}, r.Status(),
		"Status must be usable before Run")
	run(t, r)
	require.Eventually(t, func() bool { return r.Status().Term >= 3 }, 2*time.Second, time.Millisecond)
}

func TestReplicaStatusElectsLeader(t *testing.T) {
	cfg := config.Default()
	cfg.Network.OneWayMs = 1
	require.NoError(t, cluster.FreePorts(&cfg))
	l, err := cluster.StartLocal(&cfg, t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(l.Stop)

	require.Eventually(t, func() bool {
		sts := l.Statuses()
		leader := sts[0].Leader
		if leader == 0 {
			return false
		}
		self := false
		for _, st := range sts {
			if st.Leader != leader || st.Term != sts[0].Term {
				return false
			}
			self = self || st.ID == leader
		}
		return self
	}, 5*time.Second, 10*time.Millisecond, "no leader that every replica agrees on")
}

// floodFor is how long TestWeakFloodKeepsTheLeader floods; -flood 1m runs
// it for the minute a weak-only workload must last without an election.
var floodFor = flag.Duration("flood", 3*time.Second, "how long TestWeakFloodKeepsTheLeader sends weak operations")

// TestWeakFloodKeepsTheLeader: a CURP-HO follower that receives nothing
// but weak operations, as many as its client can pipeline, stays the
// follower of the leader it had: its work for clients must not hold back
// raft's messages long enough for an election timer to fire anywhere.
func TestWeakFloodKeepsTheLeader(t *testing.T) {
	cfg := config.Default()
	cfg.Protocol = config.ProtocolCURPHO
	cfg.Network.OneWayMs = 1
	cfg.Storage.Fsync = false
	require.NoError(t, cluster.FreePorts(&cfg))
	l, err := cluster.StartLocal(&cfg, t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(l.Stop)

	agreed := func() (leader wire.NodeID, term uint64) {
		sts := l.Statuses()
		for _, st := range sts {
			if st.Leader == 0 || st.Leader != sts[0].Leader || st.Term != sts[0].Term {
				return 0, 0
			}
		}
		return sts[0].Leader, sts[0].Term
	}
	var leader wire.NodeID
	var term uint64
	require.Eventually(t, func() bool { leader, term = agreed(); return leader != 0 },
		5*time.Second, 10*time.Millisecond, "no leader that every replica agrees on")

	site := ""
	for _, r := range cfg.Replicas {
		if wire.NodeID(r.ID) != leader {
			site = r.Site
			break
		}
	}
	cc, err := cluster.ClientConfig(&cfg, site)
	require.NoError(t, err)
	c, err := client.New(cc)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	const sessions, inFlight = 32, 16
	var done, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range sessions {
		s := c.NewSession()
		sem := make(chan struct{}, inFlight)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					for range inFlight {
						sem <- struct{}{}
					}
					return
				case sem <- struct{}{}:
				}
				kind, value := client.Get, []byte(nil)
				if n%10 == 0 {
					kind, value = client.Put, []byte("v")
				}
				s.Submit(kind, strconv.Itoa((i*7+n)%64), value, client.Weak, func(r client.Result) {
					if r.Err != nil {
						failed.Add(1)
					}
					done.Add(1)
					<-sem
				})
			}
		}()
	}
	deadline := time.Now().Add(*floodFor)
	for time.Now().Before(deadline) {
		for _, st := range l.Statuses() {
			if st.Leader != 0 && (st.Leader != leader || st.Term != term) {
				close(stop)
				wg.Wait()
				t.Fatalf("replica %d: leader %d term %d, was %d term %d, %d weak operations in",
					st.ID, st.Leader, st.Term, leader, term, done.Load())
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	require.Zero(t, failed.Load(), "weak operations failed")
	require.Greater(t, done.Load(), int64(1000), "too few weak operations to flood anything")
	t.Logf("%d weak operations through replica site %s, leader %d term %d throughout", done.Load(), site, leader, term)
	l2, t2 := agreed()
	require.Equal(t, [2]uint64{uint64(leader), term}, [2]uint64{uint64(l2), t2}, "the replicas changed leader")
}
