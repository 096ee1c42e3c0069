package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// outsideProgram uses every type client's Config, Result and options
// hold, as a program in a module of its own would: it can only name what
// the package exports.
const outsideProgram = `package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/hybridkv/hybridkv/client"
)

func main() {
	var faults client.Faults
	_ = faults.Set(client.FaultRules{Rules: []client.FaultRule{{Peers: []uint64{2}, Drop: 1}}})
	h := client.NewHistory()
	cfg := client.Config{
		Protocol: "curp-ho",
		Replicas: []client.Replica{{ID: 1, Addr: "127.0.0.1:1", Site: 0}},
		Delay:    client.NewDelayModel([][]time.Duration{{0}}, 0, 1),
		Faults:   &faults,
		History:  h,
		Logger:   slog.Default(),
	}
	var r client.Result
	var p client.Path = client.PathFast
	var why client.SlowReason = client.ReasonConflict
	var level client.Level = client.Weak
	var kind client.Kind = client.Put
	r.Path, r.Reason = p, why
	fmt.Println(cfg.Protocol, r.Path, r.Reason, level, kind, client.SaveHistory(h, "/dev/null") == nil)
}
`

// TestOutsideProgramBuilds builds outsideProgram in a module of its own
// that requires this one, so an internal type in the client's API, which
// such a program cannot name, fails it.
func TestOutsideProgramBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(here))
	dir := t.TempDir()
	mod := "module example.com/outside\n\ngo 1.26.8\n\nrequire github.com/hybridkv/hybridkv v0.0.0\n\nreplace github.com/hybridkv/hybridkv => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(outsideProgram), 0o644))
	// The module's own go.sum covers what the client needs.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	cmd := exec.Command("go", "build", "-mod=mod", "-o", os.DevNull, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
