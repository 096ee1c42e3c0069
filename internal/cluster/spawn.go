package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hybridkv/hybridkv/internal/config"
)

// Process is one replica running as a child process.
type Process struct {
	ID  uint64
	Cmd *exec.Cmd
	Log string // path of its combined output
	// DataDir holds the replica's raft log and snapshots.
	DataDir string
	// DebugAddr serves the replica's /status and profiles.
	DebugAddr string
	// exited is closed when the process has been waited for.
	exited chan struct{}
	err    error
}

// Processes is a cluster of child processes. Its methods are safe for
// concurrent use.
type Processes struct {
	Dir string

	binary, cfgPath string
	cfg             *config.Config

	mu    sync.Mutex
	procs []*Process
}

// List returns the replicas' current processes, in configuration order.
func (ps *Processes) List() []*Process {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return slices.Clone(ps.procs)
}

// Spawn starts every replica of cfg as `binary server --config F --id N`,
// logging to files in dir and keeping its data in dir/data/replica-N, and
// waits until each accepts connections. Replicas whose data directory does
// not exist yet bootstrap a new cluster; those that have one resume it.
func Spawn(ctx context.Context, binary string, cfg *config.Config, dir string) (*Processes, error) {
	raw, err := cfg.YAML()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		return nil, err
	}
	ps := &Processes{Dir: dir, binary: binary, cfgPath: cfgPath, cfg: cfg}
	for _, r := range cfg.Replicas {
		p, err := ps.spawnOne(r.ID)
		if err != nil {
			ps.Stop()
			return nil, err
		}
		ps.procs = append(ps.procs, p)
	}
	for i, r := range cfg.Replicas {
		if err := waitListening(ctx, r.Addr, ps.procs[i]); err != nil {
			ps.Stop()
			return nil, fmt.Errorf("replica %d: %w (see %s)", r.ID, err, ps.procs[i].Log)
		}
	}
	return ps, nil
}

// Restart starts replica id again on its data directory, once its process
// has exited (killed or stopped), and waits until it accepts connections.
func (ps *Processes) Restart(ctx context.Context, id uint64) error {
	ps.mu.Lock()
	i := slices.IndexFunc(ps.procs, func(p *Process) bool { return p.ID == id })
	if i < 0 {
		ps.mu.Unlock()
		return fmt.Errorf("no replica %d", id)
	}
	if ps.procs[i].Running() {
		ps.mu.Unlock()
		return fmt.Errorf("replica %d is running", id)
	}
	p, err := ps.spawnOne(id)
	if err != nil {
		ps.mu.Unlock()
		return err
	}
	ps.procs[i] = p
	ps.mu.Unlock()
	r, _ := findReplica(ps.cfg, id)
	if err := waitListening(ctx, r.Addr, p); err != nil {
		return fmt.Errorf("replica %d: %w (see %s)", id, err, p.Log)
	}
	return nil
}

// RestartAll restarts the replicas ids at once, as machines coming back
// from a power cut would, and waits until each accepts connections.
func (ps *Processes) RestartAll(ctx context.Context, ids []uint64) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { errs[i] = ps.Restart(ctx, id) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Proc returns replica id's process.
func (ps *Processes) Proc(id uint64) *Process {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	i := slices.IndexFunc(ps.procs, func(p *Process) bool { return p.ID == id })
	if i < 0 {
		return nil
	}
	return ps.procs[i]
}

func (ps *Processes) spawnOne(id uint64) (*Process, error) {
	logPath := filepath.Join(ps.Dir, fmt.Sprintf("replica-%d.log", id))
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	debug, err := ps.debugAddr(id)
	if err != nil {
		return nil, err
	}
	dataDir := filepath.Join(ps.Dir, "data", fmt.Sprintf("replica-%d", id))
	args := []string{"server", "--config", ps.cfgPath, "--id", strconv.FormatUint(id, 10),
		"--debug-addr", debug, "--data-dir", dataDir}
	if _, err := os.Stat(dataDir); errors.Is(err, os.ErrNotExist) {
		args = append(args, "--bootstrap")
	}
	cmd := exec.Command(ps.binary, args...)
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group: a Ctrl-C at the terminal reaches the parent, which
	// then stops its children in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("start replica %d: %w", id, err)
	}
	p := &Process{ID: id, Cmd: cmd, Log: logPath, DataDir: dataDir, DebugAddr: debug, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.exited)
	}()
	return p, nil
}

// pickDebugPort finds a free loopback port; tests replace it.
var pickDebugPort = freeAddr

// debugAddr is where replica id serves its debug endpoints: where its
// previous process did, so the address stays the same across restarts, or
// else a free loopback port that no replica is configured to listen on — a
// replica that is down leaves its port free, and a debug server there would
// take it from the replica's restart (and fault requests meant for the
// debug server would reach the replica's transport). ps.mu is held or the
// processes are not shared yet.
func (ps *Processes) debugAddr(id uint64) (string, error) {
	taken := make(map[string]bool)
	for _, r := range ps.cfg.Replicas {
		taken[r.Addr] = true
	}
	for _, p := range ps.procs {
		if p.ID == id {
			return p.DebugAddr, nil
		}
		taken[p.DebugAddr] = true
	}
	for range 100 {
		addr, err := pickDebugPort()
		if err != nil || !taken[addr] {
			return addr, err
		}
	}
	return "", errors.New("no free loopback port for a debug address")
}

func waitListening(ctx context.Context, addr string, p *Process) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited early: %v", p.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("not listening after 15s")
		}
	}
}

// Kill stops one replica at once (SIGKILL), as a crash would.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.exited
}

// Stop asks the replica to exit (SIGTERM) and kills it if it has not after
// a grace period.
func (p *Process) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.Kill()
	}
}

// Running reports whether the process has not exited.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stop asks every replica to exit (SIGTERM), and kills those that have not
// after a grace period.
func (ps *Processes) Stop() {
	procs := ps.List()
	for _, p := range procs {
		if p.Running() {
			_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range procs {
		select {
		case <-p.exited:
		case <-time.After(time.Until(deadline)):
			p.Kill()
		}
	}
}

// Status asks a running replica for its status.
func (p *Process) Status(ctx context.Context) (ServerStatus, error) {
	var st ServerStatus
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.DebugAddr+"/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("replica %d status: %s", p.ID, resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}
