package experiment

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/hybridkv/hybridkv/internal/bench"
)

// BenchRunner runs points with the benchmark, as `hybridkv bench` would.
type BenchRunner struct {
	// Binary is the hybridkv executable the replicas run; empty runs
	// against the cluster the configuration names, already running.
	Binary string
	TLS    bool
	// Check records every run's history and checks it against the
	// protocol's claims.
	Check  bool
	Logger *slog.Logger
	// Progress receives the benchmark's line per second; nil is quiet.
	Progress io.Writer
	// Build names the binary's source (see Build), taken once when the
	// experiment starts: the checkout may move on while it runs.
	Build string
}

// Run runs one point. What a run leaves on disk is kept small, since an
// experiment makes many: the replicas' data directories go once the run
// is over, and a history once it checked clean.
func (b BenchRunner) Run(ctx context.Context, j Job) (Result, error) {
	opts := bench.Options{Config: j.Config, Binary: b.Binary, WorkDir: filepath.Join(j.Dir, "logs"),
		Logger: b.Logger, Crash: j.Crash, TLS: b.TLS, Progress: b.Progress}
	if b.Check {
		opts.HistoryPath = filepath.Join(j.Dir, "history")
	}
	// What the point's directory holds is an earlier attempt's, cut short
	// before it could clean up (the experiment killed): its replicas' data
	// would have this run start from that cluster's log and state. The
	// point's result, once there is one, is kept elsewhere (results/).
	if err := os.RemoveAll(j.Dir); err != nil {
		return Result{}, err
	}
	// Against an external cluster the benchmark makes no directory of its
	// own for the history to go in.
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return Result{}, err
	}
	rep, verdict, err := bench.Run(ctx, opts)
	if cerr := removeDataDirs(opts.WorkDir); err == nil {
		err = cerr
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{Report: rep, Checked: b.Check, Build: b.Build}
	if b.Check {
		if !verdict.Clean() {
			res.Violation = verdict.Summary()
		} else if err := os.Remove(opts.HistoryPath); err != nil && !os.IsNotExist(err) {
			return Result{}, err
		}
	}
	return res, nil
}

// removeDataDirs removes the replicas' data directories under dir.
func removeDataDirs(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a directory the run never made
		}
		if d.IsDir() && d.Name() == "data" {
			dirs = append(dirs, path)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	return nil
}

// Build names the running binary's source: its commit, marked when the
// tree had changes, from the version control stamp `go build` leaves, or
// else (go run, -buildvcs=false) from the checkout in the working
// directory as it is now: call it once, when the binary starts.
func Build() string {
	var rev, modified string
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if rev == "" {
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			return "unknown (no version control stamp, and the working directory is not a checkout)"
		}
		rev = strings.TrimSpace(string(out))
		status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
		if err != nil || len(status) > 0 {
			modified = "true"
		}
	}
	if modified == "true" {
		return shortRev(rev) + " with uncommitted changes"
	}
	return shortRev(rev)
}

func shortRev(rev string) string { return rev[:min(len(rev), 12)] }

// Machine describes this machine: its processor, cores and memory.
func Machine() string {
	model := firstField("/proc/cpuinfo", "model name")
	mem := firstField("/proc/meminfo", "MemTotal")
	var parts []string
	if model != "" {
		parts = append(parts, model)
	}
	parts = append(parts, fmt.Sprintf("%d cores (%s/%s)", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH))
	if kb, err := strconv.ParseFloat(strings.TrimSuffix(mem, " kB"), 64); err == nil {
		parts = append(parts, fmt.Sprintf("%.1f GiB of memory", kb/(1<<20)))
	}
	return strings.Join(parts, ", ")
}

// firstField returns the value of the first "key: value" line of a
// /proc file whose key is key, or "" when there is none.
func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
