package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"syscall"

	"github.com/hybridkv/hybridkv/internal/transport"
)

// Pause freezes the replica (SIGSTOP): it keeps its sockets and its belief
// about who leads, and answers nothing until resumed. A paused leader is
// the classic deposed leader that wakes up believing it still leads.
func (p *Process) Pause() error { return p.Cmd.Process.Signal(syscall.SIGSTOP) }

// Resume lets a paused replica run again (SIGCONT).
func (p *Process) Resume() error { return p.Cmd.Process.Signal(syscall.SIGCONT) }

// SetFaults replaces the fault rules the replica's transport obeys, through
// its debug address; an empty set heals its links.
func (p *Process) SetFaults(ctx context.Context, rs transport.RuleSet) error {
	body, err := json.Marshal(rs)
	if err != nil {
		return err
	}
	return p.faultsRequest(ctx, http.MethodPost, body)
}

// ClearFaults heals every link of the replica.
func (p *Process) ClearFaults(ctx context.Context) error {
	return p.faultsRequest(ctx, http.MethodDelete, nil)
}

func (p *Process) faultsRequest(ctx context.Context, method string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+p.DebugAddr+"/faults", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("replica %d faults: %w", p.ID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("replica %d faults: %s: %s", p.ID, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
