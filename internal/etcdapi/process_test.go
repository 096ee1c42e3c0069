package etcdapi_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/tooltest"
)

// binary is the hybridkv executable the multi-process tests run, built
// once by TestMain.
var binary string

func TestMain(m *testing.M) {
	var err error
	if binary, err = tooltest.Hybridkv(); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(filepath.Dir(binary))
	os.Exit(code)
}

// processes is a cluster started the way a user starts one: hybridkv
// cluster (a process per replica) and a hybridkv gateway process.
type processes struct {
	dir     string
	config  string
	gateway string // the gateway's address
}

// startProcesses starts a three-replica cluster of proto, one process per
// replica, oneWayMs apart, and a gateway process at its first site.
// extraGateway are more arguments for the gateway.
func startProcesses(t *testing.T, proto string, oneWayMs float64, extraGateway ...string) *processes {
	t.Helper()
	return startProcessesWith(t, proto, oneWayMs, nil, extraGateway...)
}

// startProcessesWith is startProcesses with more arguments for hybridkv
// cluster too.
func startProcessesWith(t *testing.T, proto string, oneWayMs float64, extraCluster []string, extraGateway ...string) *processes {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real processes")
	}
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Protocol = proto
	cfg.Network.OneWayMs = oneWayMs
	require.NoError(t, cluster.FreePorts(&cfg))
	raw, err := cfg.YAML()
	require.NoError(t, err)
	base := filepath.Join(dir, "base.yaml")
	require.NoError(t, os.WriteFile(base, raw, 0o644))

	work := filepath.Join(dir, "cluster")
	start(t, regexp.MustCompile(`cluster running`), binary,
		append([]string{"cluster", "--config", base, "--dir", work}, extraCluster...)...)
	p := &processes{dir: dir, config: filepath.Join(work, "cluster.yaml")}
	args := append([]string{"gateway", "--config", p.config, "--listen", "127.0.0.1:0"}, extraGateway...)
	m := start(t, regexp.MustCompile(`listening on (\S+)`), binary, args...)
	p.gateway = m[1]
	return p
}

// start runs a long-lived command until the test ends and waits for a line
// of its output matching ready, which it returns.
func start(t *testing.T, ready *regexp.Regexp, name string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(name, args...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				lines <- m
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case m := <-lines:
		return m
	case <-time.After(30 * time.Second):
		t.Fatalf("%s %v did not start: %s", name, args, stderr.String())
	}
	return nil
}

// etcdctl runs etcdctl against endpoint, with stdin as its input, and
// returns its output.
func etcdctl(t *testing.T, bin, endpoint, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--endpoints=" + endpoint}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "etcdctl %v: %s", args, out)
	return string(out)
}
