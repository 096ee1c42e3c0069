// Package scenario runs data-driven scenario files against the protocols:
// a small language (start a cluster, add clients, submit operations, run,
// partition, crash, restart, pause, skew clocks, …) whose output is what
// the cores did — the messages they exchanged, the operations that
// completed, the replicas' state — and the checker's verdict. Each
// protocol package keeps its scenarios in testdata/, in the style of etcd
// raft's; `go test -run TestScenarios ./internal/curp -rewrite` rewrites
// the expected output, which is then read and committed like code.
//
// Replicas are named by id (1, 2, …) or by their role when the cluster
// started: L, the first leader, and F1, F2, … its followers in id order,
// so that a scenario reads the same whichever replica the seed elects.
// Clients are named by the scenario.
package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/hybridkv/hybridkv/internal/checker"
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/coreconfig"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/sim"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Run runs every scenario file in dir.
func Run(t *testing.T, dir string) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		e := &env{}
		datadriven.RunTest(t, path, e.do)
	})
}

// env is one scenario file's state.
type env struct {
	protocol string
	proto    protocols.Protocol
	s        *sim.Sim
	names    map[string]wire.NodeID // replica roles and client names
	clients  map[wire.NodeID]string
	seqs     map[[2]uint64]uint64
	open     map[wire.OpID]*history.Event
	events   []history.Event
	out      strings.Builder
	trace    map[wire.Type]bool
	// hide: descriptions, by their first word, left out of the trace.
	hide []string
	// quiet keeps the warm-up out of the output.
	quiet bool
}

func (e *env) do(t *testing.T, d *datadriven.TestData) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = fmt.Sprintf("error: %v\n", r)
		}
	}()
	e.out.Reset()
	if d.Cmd != "cluster" && e.s == nil {
		panic("no cluster: start with a cluster command")
	}
	cmd, ok := commands[d.Cmd]
	if !ok {
		panic(fmt.Sprintf("unknown command %q", d.Cmd))
	}
	cmd(e, d)
	if e.out.Len() == 0 {
		return "ok\n"
	}
	return e.out.String()
}

var commands map[string]func(*env, *datadriven.TestData)

func init() {
	commands = map[string]func(*env, *datadriven.TestData){
		"cluster": (*env).cluster, "client": (*env).client,
		"put": (*env).submit, "get": (*env).submit, "del": (*env).submit,
		"run": (*env).run, "trace": (*env).setTrace,
		"partition": (*env).partition, "block": (*env).block, "heal": (*env).heal,
		"crash": (*env).crash, "restart": (*env).restart, "lose-disk": (*env).loseDisk, "pause": (*env).pause, "resume": (*env).resume,
		"clock": (*env).clock, "slow": (*env).slow, "lossy": (*env).lossy,
		"status": (*env).status, "check": (*env).check, "leader": (*env).leader,
	}
}

func (e *env) printf(format string, args ...any) { fmt.Fprintf(&e.out, format, args...) }

// arg returns the value of key=value, or def.
func arg(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return def
}

// positional returns the arguments without a value, in order.
func positional(d *datadriven.TestData) []string {
	var ps []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			ps = append(ps, a.Key)
		}
	}
	return ps
}

func duration(s string) time.Duration {
	v, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return v
}

func number(s string) uint64 {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func float(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}

// cluster protocol=P [replicas=3] [seed=1] [delay=25ms] [jitter=0s]
// [batch=200us] [disk=1ms] [rounds=WINDOW] [expiry=0s] [warm=true]
// [volatile] [ack-on-log] starts a cluster, runs it until every replica
// knows its first leader and (unless warm=false) completes one strong
// write unprinted. With expiry the replicas forget a session idle that
// long. With ack-on-log the leader answers weak writes once it logged them
// (protocols.Protocol.AckingOnLog), and check checks what that claims.
func (e *env) cluster(d *datadriven.TestData) {
	e.protocol = arg(d, "protocol", "curp")
	p, err := protocols.Lookup(e.protocol)
	if err == nil && slices.Contains(positional(d), "ack-on-log") {
		p, err = p.AckingOnLog()
	}
	if err != nil {
		panic(err)
	}
	e.proto = p
	n := int(number(arg(d, "replicas", "3")))
	cfg := sim.Config{
		Seed: number(arg(d, "seed", "1")), Replicas: n,
		BatchDelay:        duration(arg(d, "batch", "200us")),
		DiskLatency:       duration(arg(d, "disk", "1ms")),
		VolatileWitnesses: slices.Contains(positional(d), "volatile"),
		SessionExpiry:     duration(arg(d, "expiry", "0s")),
		Network: sim.Network{OneWay: sim.UniformWAN(n, duration(arg(d, "delay", "25ms"))),
			Jitter: duration(arg(d, "jitter", "0s"))},
		NewReplica: func(cfg coreconfig.Config) (protocol.Replica, error) {
			return p.NewReplica(cfg, protocols.ReplicaOptions{})
		},
		NewClient: func(id wire.NodeID, replicas []wire.NodeID, site uint32) clientcore.Core {
			return p.NewClient(protocols.ClientOptions{ID: id, Replicas: replicas, Closest: wire.NodeID(site + 1), RetryTicks: 20})
		},
	}
	if w := arg(d, "rounds", ""); w != "" {
		cfg.Rounds = sim.Rounds{Window: duration(w)}
	}
	s, err := sim.New(cfg)
	if err != nil {
		panic(err)
	}
	e.s, e.names, e.clients = s, map[string]wire.NodeID{}, map[wire.NodeID]string{}
	e.seqs, e.open = map[[2]uint64]uint64{}, map[wire.OpID]*history.Event{}
	s.OnComplete = e.completed
	s.OnDeliver = e.delivered
	// Until every replica has heard of the leader: a witness that knows of
	// none records no strong operation.
	known := func() bool {
		for _, r := range s.Replicas() {
			if l := s.Leader(); l == 0 || s.Status(r).Leader != l {
				return false
			}
		}
		return true
	}
	if e.proto.Leaderless {
		// Every replica leads its own instances: replicas go by id.
		if arg(d, "warm", "true") == "true" {
			e.warmUp()
		}
		e.printf("%s, %d replicas, leaderless, at %v\n", e.protocol, n, s.Now().Round(time.Millisecond))
		return
	}
	if !s.RunUntil(known, 5*time.Second) {
		panic("no leader known to every replica within 5s")
	}
	if arg(d, "warm", "true") == "true" {
		e.warmUp()
	}
	leader := s.Leader()
	e.names["L"] = leader
	e.printf("%s, %d replicas: leader %d in term %d at %v\n", e.protocol, n, leader, s.Status(leader).Term, s.Now().Round(time.Millisecond))
	i := 0
	for _, r := range s.Replicas() {
		if r != leader {
			i++
			e.names[fmt.Sprintf("F%d", i)] = r
			e.printf("F%d = %d\n", i, r)
		}
	}
}

// warmUp completes one strong write from a client of its own, unprinted,
// so that the leader has finished its recovery and vouches for the
// witnesses: until then no operation completes on the fast path.
func (e *env) warmUp() {
	warm := e.s.AddClient(0)
	e.clients[warm] = "warm"
	e.quiet = true
	defer func() { e.quiet = false }()
	// No token of a scenario holds a NUL byte, so no scenario's key is
	// the warm-up's.
	op := wire.Op{Kind: wire.Put, Key: "\x00warm", Value: []byte("warm"), Level: wire.Strong}
	e.record(e.s.Submit(warm, 1<<40, op), &op)
	if !e.s.RunUntil(func() bool { return len(e.open) == 0 }, 5*time.Second) {
		panic("the warm-up write did not complete within 5s")
	}
}

// node resolves a replica's role or id, or a client's name.
func (e *env) node(name string) wire.NodeID {
	if id, ok := e.names[name]; ok {
		return id
	}
	if id, err := strconv.ParseUint(name, 10, 64); err == nil && int(id) <= len(e.s.Replicas()) {
		return wire.NodeID(id)
	}
	panic(fmt.Sprintf("no node %q", name))
}

func (e *env) nodes(names []string) []wire.NodeID {
	var ids []wire.NodeID
	for _, n := range names {
		ids = append(ids, e.node(n))
	}
	return ids
}

// name is how output names a node: a client by its name, a replica by id.
func (e *env) name(id wire.NodeID) string {
	if c, ok := e.clients[id]; ok {
		return c
	}
	return strconv.FormatUint(uint64(id), 10)
}

// client NAME at=REPLICA adds a client process at a replica's site.
func (e *env) client(d *datadriven.TestData) {
	name := positional(d)[0]
	at := e.node(arg(d, "at", "L"))
	id := e.s.AddClient(e.s.Site(at))
	e.names[name], e.clients[id] = id, name
	e.printf("%s at the site of replica %d\n", name, at)
}

// put CLIENT SESSION KEY VALUE strong|weak, get CLIENT SESSION KEY
// strong|weak and del CLIENT SESSION KEY strong|weak submit an operation;
// run shows it complete. A key is any token.
func (e *env) submit(d *datadriven.TestData) {
	ps := positional(d)
	client, session, key := e.node(ps[0]), number(ps[1]), ps[2]
	op := wire.Op{Kind: wire.Get, Key: key, Level: level(ps[len(ps)-1])}
	switch d.Cmd {
	case "put":
		op.Kind, op.Value = wire.Put, []byte(ps[3])
	case "del":
		op.Kind = wire.Delete
	}
	// A microsecond first: what completed just now returned strictly
	// before this is invoked, as with a real client, so the checker sees
	// the session and real-time order the scenario means.
	e.s.RunFor(time.Microsecond)
	id := e.s.Submit(client, session, op)
	e.record(id, &op)
	e.printf("%s %s\n", e.name(client), describeOp(id, &op))
}

// record opens op's event in the history.
func (e *env) record(id wire.OpID, op *wire.Op) {
	ev := &history.Event{Session: id.Session, Seq: id.Seq, Level: op.Level, Kind: op.Kind, Key: op.Key,
		Invoke: int64(e.s.Now()), Outcome: history.Unknown}
	if op.Kind == wire.Put {
		ev.Value = op.Value
	}
	e.open[id] = ev
}

func level(s string) wire.Level {
	switch s {
	case "strong":
		return wire.Strong
	case "weak":
		return wire.Weak
	}
	panic(fmt.Sprintf("level %q: want strong or weak", s))
}

func (e *env) completed(client wire.NodeID, c clientcore.Completion) {
	if ev := e.open[c.ID]; ev != nil {
		delete(e.open, c.ID)
		ev.Return, ev.Outcome, ev.Slot = int64(e.s.Now()), history.OK, c.FinalSlot()
		if !ev.Kind.IsWrite() {
			ev.Found, ev.Value = c.Found, c.Value
		}
		e.events = append(e.events, *ev)
	}
	if e.quiet {
		return
	}
	result := ""
	if !c.Op.Kind.IsWrite() {
		result = " -> " + value(c.Found, c.Value)
	}
	why := ""
	if c.Reason != clientcore.ReasonNone {
		why = " (" + c.Reason.String() + ")"
	}
	slot := ""
	if c.Slot != 0 {
		slot = fmt.Sprintf(", slot %d", c.Slot)
	}
	e.printf("%v %s done %s%s: %s%s%s\n", e.s.Now().Round(time.Millisecond), e.name(client),
		describeOp(c.ID, &c.Op), result, c.Path, why, slot)
}

func value(found bool, v []byte) string {
	if !found {
		return "not found"
	}
	return fmt.Sprintf("%q", v)
}

func (e *env) delivered(from, to wire.NodeID, m wire.Message) {
	if !e.trace[m.Type()] || e.quiet {
		return
	}
	text := describe(m)
	if first, _, _ := strings.Cut(text, " "); slices.Contains(e.hide, first) {
		return
	}
	e.printf("%v %s -> %s %s\n", e.s.Now().Round(time.Millisecond), e.name(from), e.name(to), text)
}

// trace [TYPE…] shows the messages of those types (request, reply, raft,
// recover, epaxos, …) as they are delivered; trace with no type stops it.
// hide=WORD,… leaves out the messages whose description starts with one
// of the words (hide=executed: EPaxos's periodic executed notices).
func (e *env) setTrace(d *datadriven.TestData) {
	e.trace = map[wire.Type]bool{}
	e.hide = nil
	if h := arg(d, "hide", ""); h != "" {
		e.hide = strings.Split(h, ",")
	}
	for _, p := range positional(d) {
		found := false
		for t := wire.TypeHello; !strings.HasPrefix(t.String(), "type("); t++ {
			if t.String() == p {
				e.trace[t], found = true, true
			}
		}
		if !found {
			panic(fmt.Sprintf("no message type %q", p))
		}
	}
}

// run [for=DURATION] runs the cluster: for that long, or until every
// operation submitted has completed (at most 30 s of virtual time).
func (e *env) run(d *datadriven.TestData) {
	if f := arg(d, "for", ""); f != "" {
		e.s.RunFor(duration(f))
		return
	}
	if !e.s.RunUntil(func() bool { return len(e.open) == 0 }, 30*time.Second) {
		ids := slices.SortedFunc(func(yield func(wire.OpID) bool) {
			for id := range e.open {
				if !yield(id) {
					return
				}
			}
		}, func(a, b wire.OpID) int { return a.Compare(b) })
		e.printf("after 30s still open: %v\n", ids)
	}
}

// partition A… / B… cuts the groups off from each other, both ways.
func (e *env) partition(d *datadriven.TestData) {
	a, b := groups(d)
	e.s.Partition(e.nodes(a), e.nodes(b))
}

// block A… / B… drops what the first group sends the second.
func (e *env) block(d *datadriven.TestData) {
	a, b := groups(d)
	e.s.Block(e.nodes(a), e.nodes(b))
}

func groups(d *datadriven.TestData) (a, b []string) {
	ps := positional(d)
	i := slices.Index(ps, "/")
	if i < 0 {
		panic("want two groups separated by /")
	}
	return ps[:i], ps[i+1:]
}

func (e *env) heal(*datadriven.TestData) { e.s.Heal() }

func (e *env) crash(d *datadriven.TestData) {
	for _, id := range e.nodes(positional(d)) {
		e.s.Crash(id)
	}
}

func (e *env) restart(d *datadriven.TestData) {
	for _, id := range e.nodes(positional(d)) {
		if err := e.s.Restart(id); err != nil {
			panic(err)
		}
	}
}

// lose-disk NODE… gives crashed replicas blank disks, as a disk failure
// would.
func (e *env) loseDisk(d *datadriven.TestData) {
	for _, id := range e.nodes(positional(d)) {
		e.s.LoseDisk(id)
	}
}

func (e *env) pause(d *datadriven.TestData) {
	for _, id := range e.nodes(positional(d)) {
		e.s.Pause(id)
	}
}

func (e *env) resume(d *datadriven.TestData) {
	for _, id := range e.nodes(positional(d)) {
		e.s.Resume(id)
	}
}

// clock NODE… rate=R runs the nodes' clocks at R times the rate.
func (e *env) clock(d *datadriven.TestData) {
	for _, id := range e.nodes(positional(d)) {
		e.s.SetTickRate(id, float(arg(d, "rate", "1")))
	}
}

// slow FROM TO by=DURATION delays what FROM sends TO.
func (e *env) slow(d *datadriven.TestData) {
	ps := positional(d)
	e.s.SlowLink(e.node(ps[0]), e.node(ps[1]), duration(arg(d, "by", "0s")))
}

// lossy FROM TO p=P drops that share of what FROM sends TO.
func (e *env) lossy(d *datadriven.TestData) {
	ps := positional(d)
	e.s.LossyLink(e.node(ps[0]), e.node(ps[1]), float(arg(d, "p", "0")))
}

// leader NAME names the current leader (as the replicas see it), for the
// commands that follow.
func (e *env) leader(d *datadriven.TestData) {
	l := e.s.Leader()
	if l == 0 {
		panic("no leader")
	}
	name := positional(d)[0]
	e.names[name] = l
	e.printf("%s = %d\n", name, l)
}

// status prints each replica's view: up or down, leader, term, commit and
// applied indexes.
func (e *env) status(*datadriven.TestData) {
	for _, id := range e.s.Replicas() {
		if !e.s.Up(id) {
			e.printf("%d: down\n", id)
			continue
		}
		st := e.s.Status(id)
		e.printf("%d: leader %d term %d commit %d applied %d\n", id, st.Leader, st.Term, st.Commit, st.Applied)
	}
}

// check lets the replicas converge and checks the history of the
// operations completed so far (open ones as possibly applied).
func (e *env) check(*datadriven.TestData) {
	_, sts := e.s.Converged(30 * time.Second)
	log, err := e.s.CommittedLog()
	if err != nil {
		panic(err)
	}
	f := &history.File{Events: slices.Clone(e.events), Log: log}
	for _, ev := range e.open {
		f.Events = append(f.Events, *ev)
	}
	for _, st := range sts {
		f.Replicas = append(f.Replicas, history.ReplicaState{ID: uint64(st.ID), Applied: st.Applied, Digest: st.Digest})
	}
	res := checker.Check(f, e.proto.CheckOptions())
	if res.Clean() {
		e.printf("clean: %d operations\n", len(f.Events))
		return
	}
	for _, v := range res.Violations {
		e.printf("%s\n", v.String())
	}
}
