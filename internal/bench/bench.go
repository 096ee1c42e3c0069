package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/stats"
	"github.com/hybridkv/hybridkv/internal/workload"
)

// Options control one benchmark run.
type Options struct {
	Config config.Config
	// Binary is the hybridkv executable to start replicas with; empty runs
	// against a cluster already listening at the configured addresses.
	Binary string
	// WorkDir receives the replicas' logs and configuration.
	WorkDir string
	// Progress receives a line per second while the run goes; nil is quiet.
	Progress io.Writer
	Logger   *slog.Logger
	// Crash, when set, SIGKILLs replica processes mid-run (and restarts
	// them from their data directories if asked); the report says how long
	// strong writes were unavailable.
	Crash *Crash
	// HistoryPath, when set, records every operation there and checks the
	// history for consistency violations after the run.
	HistoryPath string
	// Measured, when set with HistoryPath, is handed the report once the
	// run is measured and before its history is checked: a long run's
	// check takes minutes, and may run out of memory.
	Measured func(*stats.Report)
	// TLS generates certificates in WorkDir and runs every link over
	// mutual TLS.
	TLS bool
	// MetricsCSV, when set, receives the replicas' metrics as scraped once
	// a second during the run (spawned replicas only: an external
	// cluster's debug addresses are not known).
	MetricsCSV string
	// Nemesis, when set, injects faults through the run (replicas started
	// by the run only) and reports what each cost; the run fails if a
	// fault could not be injected or healed.
	Nemesis *Nemesis
	// ProbeBinary, when set, runs that hybridkv executable's machine probe
	// beside the measured run, at the lowest priority, and adds the
	// machine's memory and core speed to the over-time section.
	ProbeBinary string
	// API is what the sessions speak: APINative (the default, "") or
	// APIEtcd.
	API string
}

// Run runs one benchmark and returns its report, and with HistoryPath set
// the verdict of the consistency check.
func Run(ctx context.Context, o Options) (*stats.Report, *Verdict, error) {
	// The run draws its own addresses and certificates into cfg; the
	// caller's configuration serves again for its next run.
	cfg := o.Config.Clone()
	proto, err := protocols.Lookup(cfg.Protocol)
	if err == nil && cfg.Client.AckWeakWritesOnLog() {
		// The clients ask for it (cluster.ClientConfig); the check must
		// know what the acknowledgements promise.
		proto, err = proto.AckingOnLog()
	}
	if err != nil {
		return nil, nil, err
	}
	switch o.API {
	case "", APINative:
	case APIEtcd:
		if o.TLS {
			return nil, nil, fmt.Errorf("bench: --api etcd runs its gateways in the benchmark's process, on loopback, without TLS; drop --tls")
		}
	default:
		return nil, nil, fmt.Errorf("bench: unknown API %q (native or etcd)", o.API)
	}
	steps, err := nemesisSchedule(o, &cfg)
	if err != nil {
		return nil, nil, err
	}
	var procs *cluster.Processes
	if o.Binary != "" {
		if err := cluster.FreePorts(&cfg); err != nil {
			return nil, nil, err
		}
		if o.TLS {
			if err := cluster.GenerateTLS(&cfg, filepath.Join(o.WorkDir, "certs")); err != nil {
				return nil, nil, err
			}
		}
		procs, err = cluster.Spawn(ctx, o.Binary, &cfg, o.WorkDir)
		if err != nil {
			return nil, nil, err
		}
		defer procs.Stop()
	}
	start := time.Now()
	r := &run{cfg: &cfg, proto: proto, opts: o, procs: procs, start: start, steps: steps}
	if o.Nemesis != nil || o.Crash != nil {
		r.faults = newFaultLog(start, o.Progress)
	}
	if o.HistoryPath != "" {
		if r.history, err = createHistory(o.HistoryPath); err != nil {
			return nil, nil, err
		}
		defer r.history.abandon()
		LimitMemoryForCheck()
		if procs == nil {
			// A cluster this run did not start may hold earlier runs'
			// keys, whose values the check would take for values from
			// nowhere: the run's keys get names of their own.
			r.keyPrefix = fmt.Sprintf("r%s-%s", strconv.FormatInt(start.UnixNano(), 36), workload.KeyPrefix)
		}
	}
	if err := r.openClients(); err != nil {
		return nil, nil, err
	}
	defer r.closeClients()
	var preloaded string
	if cfg.Bench.Preload {
		if preloaded, err = r.preload(ctx); err != nil {
			return nil, nil, err
		}
		start = r.restartClock()
	}
	scr := r.startScraping()
	mp, err := r.startProbe(ctx)
	if err != nil {
		scr.stop()
		return nil, nil, err
	}
	report, err := r.measure(ctx)
	machine, probeErr := mp.stop()
	if err != nil {
		scr.stop()
		return nil, nil, err
	}
	if probeErr != nil {
		scr.stop()
		return nil, nil, probeErr
	}
	if err := r.overTime(scr, report, machine.machineSamples()); err != nil {
		return nil, nil, err
	}
	if machine != nil {
		report.Notes = append(report.Notes, machine.note())
	}
	if preloaded != "" {
		report.Notes = append(report.Notes, preloaded)
	}
	if r.keyPrefix != "" {
		report.Notes = append(report.Notes, fmt.Sprintf("keys named %s...: the cluster was running before the run and may hold "+
			"earlier runs' keys, which the check cannot know of", r.keyPrefix))
	}
	report.Notes = append(report.Notes, r.outage.notes(start)...)
	if o.Nemesis != nil {
		report.Notes = append(report.Notes, scheduleNotes(o.Nemesis, steps, &cfg)...)
	}
	if r.faults != nil {
		r.faults.fill(report, r.sites())
	}
	report.Notes = append(report.Notes, r.etcd.notes(cfg.Clients.Sites)...)
	if r.history != nil {
		report.Notes = append(report.Notes, r.readBack(ctx))
	}
	note, states := r.converged(ctx)
	report.Notes = append(report.Notes, r.disks...)
	if note != "" {
		report.Notes = append(report.Notes, note)
	}
	var verdict *Verdict
	if r.history != nil {
		if o.Measured != nil {
			o.Measured(report)
		}
		r.closeClients() // every call is answered or abandoned: the history is complete
		if verdict, err = r.check(r.history, states); err != nil {
			return nil, nil, err
		}
		report.Notes = append(report.Notes, verdict.Summary())
	}
	if cfg.Client.AckWeakWritesOnLog() {
		report.Notes = append(report.Notes, "weak write durability: "+proto.Claims.WeakWriteDurability+"; the check owes an acknowledged weak write nothing")
	}
	// Every mix has weak operations; otherwise the weak share says.
	if proto.WeakAsStrong && (cfg.Bench.WeakRatio > 0 || cfg.Bench.Mix != "") {
		report.Notes = append(report.Notes, fmt.Sprintf(
			"%s has no weak path: weak operations were served as strong ones", cfg.Protocol))
	}
	if r.faults != nil {
		if errs := r.faults.errors(); len(errs) > 0 {
			return report, verdict, fmt.Errorf("nemesis: %d fault actions failed, the results are not trustworthy: %s",
				len(errs), strings.Join(errs, "; "))
		}
	}
	return report, verdict, nil
}

type run struct {
	// start is where the clients' timelines and the scraped series start.
	start   time.Time
	cfg     *config.Config
	proto   protocols.Protocol
	opts    Options
	procs   *cluster.Processes
	clients []*benchClient
	history *historyFile
	// etcd holds the gateways and connections of an APIEtcd run.
	etcd    etcdGateways
	ops     atomic.Int64
	stopped atomic.Bool
	outage  outage
	// steps and faults are the nemesis's schedule and record; nil
	// without a nemesis.
	steps  []faultStep
	faults *faultLog
	// disks describes each replica's disk at the end of the run.
	disks []string
	// keyPrefix begins the run's keys' names; empty is the workload's own.
	keyPrefix string
}

type benchClient struct {
	site string
	c    *client.Client
	// rec is shared by the client's sessions: their completions all run
	// on the client's one event loop goroutine.
	rec     *stats.Recorder
	drivers []*driver
}

// workload is the operation mix of session number index of the run's
// sessions (which places the keys it inserts).
func (r *run) workload(index int) workload.Config {
	b := r.cfg.Bench
	return workload.Config{
		Writes: float64(b.Writes), WeakRatio: float64(b.WeakRatio), WeakWrites: float64(b.WeakWrites),
		Conflicts: float64(b.Conflicts), KeySpace: b.KeySpace, ZipfSkew: b.ZipfSkew, ValueSize: b.CommandSize,
		YCSB:         b.YCSB,
		YCSBWeak:     b.YCSBWeak,
		Mix:          b.Mix,
		KeyPrefix:    r.keyPrefix,
		InsertStride: uint64(len(r.cfg.Clients.Sites) * r.cfg.Clients.Threads), InsertOffset: uint64(index),
	}
}

func (r *run) openClients() error {
	start := r.start
	for ci, site := range r.cfg.Clients.Sites {
		cc, err := cluster.ClientConfig(r.cfg, site)
		if err != nil {
			return err
		}
		cc.Logger = r.opts.Logger
		if r.history != nil {
			cc.History = r.history.rec
		}
		c, err := client.New(cc)
		if err != nil {
			return err
		}
		bc := &benchClient{site: site, c: c, rec: stats.NewRecorder(start)}
		r.clients = append(r.clients, bc)
		var gw *cluster.Gateway
		if r.opts.API == APIEtcd {
			if gw, err = r.etcd.start(r, site, c); err != nil {
				return err
			}
		}
		for k := 0; k < r.cfg.Clients.Threads; k++ {
			gen, err := workload.NewGenerator(r.workload(ci*r.cfg.Clients.Threads+k), r.cfg.Bench.Seed+uint64(ci*1000+k))
			if err != nil {
				return err
			}
			var sess session = c.NewSession()
			if gw != nil {
				// The gateway numbers its sessions itself; this names the
				// values the connection writes, one name per connection.
				if sess, err = r.etcd.session(gw, uint64(ci*1000+k+1)<<32); err != nil {
					return err
				}
			}
			bc.drivers = append(bc.drivers, &driver{
				session:  sess,
				gen:      gen,
				rec:      bc.rec,
				pendings: r.cfg.Bench.Pendings,
				limit:    r.cfg.Bench.Reqs,
				stopped:  &r.stopped,
				outage:   &r.outage,
				faults:   r.faults,
				site:     site,
				ops:      &r.ops,
				drained:  make(chan struct{}),
				written:  r.keysWritten(),
			})
		}
	}
	return nil
}

// keysWritten is a driver's record of the keys it writes: kept only when
// the history is checked, for the final read-back.
func (r *run) keysWritten() map[string]struct{} {
	if r.history == nil {
		return nil
	}
	return make(map[string]struct{})
}

func (r *run) closeClients() {
	r.etcd.stop()
	for _, bc := range r.clients {
		bc.c.Close()
	}
}

func (r *run) drivers() []*driver {
	var ds []*driver
	for _, bc := range r.clients {
		ds = append(ds, bc.drivers...)
	}
	return ds
}

// measure runs the load: warm-up, measured window, drain.
func (r *run) measure(ctx context.Context) (*stats.Report, error) {
	b := r.cfg.Bench
	start := time.Now()
	windowStart, windowEnd := start.Add(b.Warmup()), start.Add(b.Warmup()+b.Duration())
	if b.Reqs > 0 {
		// Open-ended: the window closes at the last completion.
		windowStart, windowEnd = time.Time{}, time.Time{}
	}
	for _, bc := range r.clients {
		bc.rec.SetWindow(windowStart, windowEnd)
	}
	if r.faults != nil {
		// The schedule's offsets count from here; no operation has
		// started yet, so nothing reads the field meanwhile.
		r.faults.start = start
	}
	for _, d := range r.drivers() {
		d.start()
	}
	stopProgress := r.progress(start)
	defer stopProgress()
	if c := r.opts.Crash; c != nil && r.procs != nil {
		stopCrash := r.crashAt(ctx, start, *c)
		defer stopCrash()
	}
	if r.faults != nil {
		stopNemesis := r.runNemesis(ctx, r.faults.start, r.steps)
		defer stopNemesis()
	}

	cpuStart := r.cpu()
	if b.Reqs == 0 {
		if !sleepUntil(ctx, windowStart) {
			return nil, r.interrupted(ctx)
		}
		cpuStart = r.cpu()
		if !sleepUntil(ctx, windowEnd) {
			return nil, r.interrupted(ctx)
		}
	}
	cpuEnd := r.cpu()
	if b.Reqs == 0 {
		r.stopped.Store(true)
		for _, d := range r.drivers() {
			d.stop()
		}
	}
	if err := r.drain(ctx, b.Reqs > 0); err != nil {
		return nil, err
	}
	if b.Reqs > 0 {
		cpuEnd = r.cpu()
	}
	return r.report(cpuStart, cpuEnd), nil
}

// interrupted stops the sessions issuing when the run is cut short, so
// that closing the clients fails what is in flight and nothing more.
func (r *run) interrupted(ctx context.Context) error {
	r.stopped.Store(true)
	return ctx.Err()
}

// drain waits for every session to finish what it has in flight. In
// request-count mode that is the whole run.
func (r *run) drain(ctx context.Context, whole bool) error {
	limit := 30 * time.Second
	if whole {
		limit = 24 * time.Hour
	}
	timeout := time.After(limit)
	for _, d := range r.drivers() {
		select {
		case <-d.drained:
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return errors.New("bench: sessions did not drain: operations are stuck")
		}
	}
	return nil
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-time.After(time.Until(t)):
		return true
	case <-ctx.Done():
		return false
	}
}

// progress prints throughput once a second until stopped.
func (r *run) progress(start time.Time) func() {
	last := int64(0)
	return r.every(time.Second, func(now time.Time) {
		n := r.ops.Load()
		fmt.Fprintf(r.opts.Progress, "  %5.0fs  %8d ops/s  %10d ops\n", now.Sub(start).Seconds(), n-last, n)
		last = n
	})
}

// every calls report each interval while the run goes, if the run shows
// its progress; the returned function stops it.
func (r *run) every(interval time.Duration, report func(now time.Time)) func() {
	if r.opts.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				report(now)
			}
		}
	}()
	return func() { close(done) }
}

// cpu samples CPU time of every process of the run: the replicas, and this
// process (all clients).
func (r *run) cpu() map[string]time.Duration {
	m := map[string]time.Duration{"clients (bench process)": stats.SelfCPU()}
	if r.procs == nil {
		return m
	}
	for _, p := range r.procs.List() {
		if d, err := stats.ProcessCPU(p.Cmd.Process.Pid); err == nil {
			m[fmt.Sprintf("replica %d", p.ID)] = d
		}
	}
	return m
}

func (r *run) report(cpuStart, cpuEnd map[string]time.Duration) *stats.Report {
	var recs []stats.ClientRecorder
	for i, bc := range r.clients {
		recs = append(recs, stats.ClientRecorder{Name: fmt.Sprintf("client %d (%s)", i+1, bc.site), Recorder: bc.rec})
	}
	var cpu []stats.CPUUsage
	for _, name := range slices.Sorted(maps.Keys(cpuEnd)) {
		cpu = append(cpu, stats.CPUUsage{Name: name, Seconds: (cpuEnd[name] - cpuStart[name]).Seconds()})
	}
	return stats.BuildReport(stats.Run{
		Protocol:          r.cfg.Protocol,
		Replicas:          len(r.cfg.Replicas),
		Clients:           len(r.clients),
		SessionsPerClient: r.cfg.Clients.Threads,
	}, recs, cpu)
}
