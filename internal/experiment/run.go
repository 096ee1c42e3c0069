package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// Point is one run of an experiment: a protocol, a value of the
// experiment's parameter (0 when it has none) and which repeat.
type Point struct {
	Protocol string
	Value    float64
	Run      int // from 1
}

// Job is what running a point takes.
type Job struct {
	Point
	Config config.Config
	Crash  *bench.Crash
	// Dir is the point's own directory, for its logs and history.
	Dir string
}

// Result is a finished run, as kept on disk.
type Result struct {
	Report *stats.Report `json:"report"`
	// Checked says whether the run's history was checked, Violation what
	// the checker found ("" when clean).
	Checked   bool   `json:"checked"`
	Violation string `json:"violation,omitempty"`
	// Seconds is how long the run took, start-up included.
	Seconds float64 `json:"seconds"`
	Build   string  `json:"build"`
}

// RunFunc runs one point.
type RunFunc func(ctx context.Context, j Job) (Result, error)

// Options are what an experiment command asks for.
type Options struct {
	// Base is the configuration the experiment's settings go on top of.
	Base config.Config
	// Overlay, when set, applies what the command line set on top of the
	// experiment's settings (a longer --duration, say); the experiment's
	// parameter is applied after it and always varies.
	Overlay func(*config.Config)
	// Dir holds every experiment's directory.
	Dir   string
	Runs  int
	Quick bool
	// Only, when not empty, restricts every experiment to these
	// protocols.
	Only []string
	// Command is the command line, for the summary.
	Command string
	Build   string
	Machine string
	Run     RunFunc
	// Progress receives a line per finished point; nil is quiet.
	Progress io.Writer
	// Now is the clock the time-left estimate reads; nil is time.Now.
	Now func() time.Time
}

// Outcome is what an experiment left: its directory, and what a reader
// must not miss.
type Outcome struct {
	Dir string
	// Runs counts the runs, Violations those whose history failed its
	// check, Failed the operations that failed in all of them.
	Runs, Violations int
	Failed           int64
}

// Run runs the experiment s, skipping the points whose result its
// directory already holds, then writes its CSV, figure and summary.
func Run(ctx context.Context, s Spec, o Options) (Outcome, error) {
	dir := filepath.Join(o.Dir, s.Name)
	if o.Quick {
		dir += "-quick"
	}
	points := s.points(o)
	if len(points) == 0 {
		return Outcome{}, fmt.Errorf("experiment %s: no protocol to run (--protocol %v)", s.Name, o.Only)
	}
	if err := claimDir(dir, s, o, s.job(points[0], o, dir).Config); err != nil {
		return Outcome{}, err
	}
	results := make(map[Point]Result, len(points))
	var todo []Point
	for _, p := range points {
		r, ok, err := load(resultPath(dir, s, p))
		switch {
		case err != nil:
			return Outcome{}, err
		case ok:
			results[p] = r
		default:
			todo = append(todo, p)
		}
	}
	// Every point's configuration is checked before any runs, so that a
	// bad one fails the experiment now and not an hour into it.
	for _, p := range todo {
		cfg := s.job(p, o, dir).Config
		if err := cfg.Validate(); err != nil {
			return Outcome{}, fmt.Errorf("experiment %s, %s %s: %w", s.Name, p.Protocol, s.label(p.Value), err)
		}
	}
	prog := progress{w: o.Progress, name: s.Name, total: len(points), done: len(points) - len(todo), now: o.Now}
	for p, r := range results {
		prog.took(p, r.Seconds)
	}
	prog.start(todo)
	for _, p := range todo {
		if err := ctx.Err(); err != nil {
			return Outcome{}, fmt.Errorf("experiment %s interrupted with %d of %d runs done; run the same command again to resume: %w",
				s.Name, prog.done, prog.total, err)
		}
		job := s.job(p, o, dir)
		began := prog.clock()
		r, err := o.Run(ctx, job)
		if err != nil && ctx.Err() != nil {
			return Outcome{}, fmt.Errorf("experiment %s interrupted during %s %s run %d, with %d of %d runs done; run the same command again to resume: %w",
				s.Name, p.Protocol, s.label(p.Value), p.Run, prog.done, prog.total, ctx.Err())
		}
		if err != nil {
			return Outcome{}, fmt.Errorf("experiment %s, %s %s run %d: %w (the runs done are kept: the same command resumes)",
				s.Name, p.Protocol, s.label(p.Value), p.Run, err)
		}
		r.Seconds = prog.clock().Sub(began).Seconds()
		if r.Build == "" {
			r.Build = o.Build
		}
		if err := store(resultPath(dir, s, p), r); err != nil {
			return Outcome{}, err
		}
		results[p] = r
		prog.finished(s, p, r)
	}
	out := Outcome{Dir: dir, Runs: len(points)}
	for _, r := range results {
		out.Failed += r.Report.Failed
		if r.Violation != "" {
			out.Violations++
		}
	}
	return out, s.write(dir, points, results, o)
}

// points lists the experiment's runs in the order they go: repeat by
// repeat, and within one, value by value, every protocol at each.
func (s Spec) points(o Options) []Point {
	var out []Point
	names := s.protocolsOf(o.Only)
	for run := 1; run <= max(o.Runs, 1); run++ {
		for _, v := range s.values(o.Quick) {
			for _, name := range names {
				out = append(out, Point{Protocol: name, Value: v, Run: run})
			}
		}
	}
	return out
}

// job builds a point's configuration: the base, the experiment's
// settings, the point's protocol and value.
func (s Spec) job(p Point, o Options, dir string) Job {
	// Each job's configuration is its own: a run rewrites parts of it
	// (the addresses it draws), and Base serves every later point and
	// experiment, and the settings a resume compares.
	cfg := o.Base.Clone()
	cfg.Protocol = p.Protocol
	if s.Setup != nil {
		s.Setup(&cfg, o.Quick)
	}
	if o.Overlay != nil {
		o.Overlay(&cfg)
	}
	if s.Param != "" {
		s.Apply(&cfg, p.Value)
	}
	j := Job{Point: p, Config: cfg, Dir: filepath.Join(dir, "runs", pointName(s, p))}
	if s.Crash != nil {
		j.Crash = s.Crash(o.Quick)
	}
	return j
}

func pointName(s Spec, p Point) string {
	name := p.Protocol
	if s.Param != "" {
		name += "-" + s.Param + "-" + s.valueName(p.Value)
	}
	return fmt.Sprintf("%s-run%d", name, p.Run)
}

func resultPath(dir string, s Spec, p Point) string {
	return filepath.Join(dir, "results", pointName(s, p)+".json")
}

// load reads a kept result; ok is false when there is none.
func load(path string) (Result, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil || r.Report == nil {
		return Result{}, false, fmt.Errorf("%s: not a finished run (%v); remove it to run the point again", path, err)
	}
	return r, true, nil
}

// store writes a result whole or not at all: an experiment killed mid-write
// must not leave a truncated result that a resume would trust.
func store(path string, r Result) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// settings is what an experiment's directory was started with: resuming
// with other settings would mix runs that do not compare. Config is the
// first point's, its protocol left out: every other point differs from it
// only in its protocol and the parameter's value.
type settings struct {
	Experiment string        `json:"experiment"`
	Quick      bool          `json:"quick"`
	Config     config.Config `json:"config"`
}

// claimDir creates the experiment's directory, or checks that the one
// already there was started with the same settings.
func claimDir(dir string, s Spec, o Options, first config.Config) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	first.Protocol = ""
	want, err := json.MarshalIndent(settings{Experiment: s.Name, Quick: o.Quick, Config: first}, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "settings.json")
	have, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.WriteFile(path, want, 0o644)
	case err != nil:
		return err
	}
	// Compared as read back, so that a setting a later build added (and
	// the file therefore lacks) counts as its default.
	var was settings
	if err := json.Unmarshal(have, &was); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if again, err := json.MarshalIndent(was, "", "  "); err != nil || string(again) != string(want) {
		return fmt.Errorf("%s holds runs made with other settings (see its settings.json); give another --out, or remove it to start over", dir)
	}
	return nil
}

// progress reports each finished point with how many are left and about
// how long they will take: a point run before (an earlier repeat, or a
// run kept from before a resume) is taken to take as long again, any
// other as long as this invocation's runs took on average. Points differ
// widely (at 99 % weak a run completes, and its check reads, several
// times the operations it does at 0 %), so one mean misjudged them.
type progress struct {
	w           io.Writer
	name        string
	total, done int
	now         func() time.Time
	ran         int
	// left are the points still to run; seconds, how long each point
	// (any repeat) took last; spent, how long this invocation's runs took.
	left    []Point
	seconds map[Point]float64
	spent   float64
}

// took records that a run of p took secs.
func (p *progress) took(pt Point, secs float64) {
	if p.seconds == nil {
		p.seconds = make(map[Point]float64)
	}
	pt.Run = 0
	if secs > 0 {
		p.seconds[pt] = secs
	}
}

// eta estimates the time the points left will take.
func (p *progress) eta() time.Duration {
	var mean float64
	if p.ran > 0 {
		mean = p.spent / float64(p.ran)
	} else if len(p.seconds) > 0 {
		for _, secs := range p.seconds {
			mean += secs
		}
		mean /= float64(len(p.seconds))
	}
	total := 0.0
	for _, pt := range p.left {
		pt.Run = 0
		if secs, ok := p.seconds[pt]; ok {
			total += secs
		} else {
			total += mean
		}
	}
	return time.Duration(total * float64(time.Second)).Round(time.Second)
}

func (p *progress) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

func (p *progress) start(todo []Point) {
	p.left = slices.Clone(todo) // finished deletes from it; todo is being run
	if p.w == nil {
		return
	}
	if p.done > 0 {
		fmt.Fprintf(p.w, "%s: %d of %d runs already done, resuming with %d\n", p.name, p.done, p.total, len(todo))
	} else {
		fmt.Fprintf(p.w, "%s: %d runs\n", p.name, p.total)
	}
}

func (p *progress) finished(s Spec, pt Point, r Result) {
	p.done++
	p.ran++
	p.spent += r.Seconds
	p.took(pt, r.Seconds)
	if i := slices.Index(p.left, pt); i >= 0 {
		p.left = slices.Delete(p.left, i, i+1)
	}
	if p.w == nil {
		return
	}
	left := p.total - p.done
	eta := p.eta()
	what := pt.Protocol
	if l := s.label(pt.Value); l != "" {
		what += " " + l
	}
	check := ""
	if r.Checked {
		check = ", checked clean"
		if r.Violation != "" {
			check = ", VIOLATION: " + r.Violation
		}
	}
	fmt.Fprintf(p.w, "[%d/%d] %s %s run %d: %.0f ops/s, %d failed%s (%.0fs); %d left, about %v\n",
		p.done, p.total, s.Name, what, pt.Run, r.Report.Throughput, r.Report.Failed, check, r.Seconds, left, eta)
}
