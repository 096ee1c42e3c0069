// Package tooltest builds the programs the tests run as real processes:
// this module's hybridkv (Hybridkv), and the real third-party clients
// (etcdctl, go-ycsb) from their published module source, once per version,
// into the user's cache directory. A test that needs one fails if it
// cannot be built (no module proxy, no cache): these tests check what
// hybridkv promises to programs it does not control, and a skip would
// hide that they did not run.
package tooltest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Versions of the clients the tests build.
const (
	EtcdctlVersion = "v3.7.3"
	GoYCSBVersion  = "v1.0.3"
)

var mu sync.Mutex

// Hybridkv builds this module's hybridkv command into a new temporary
// directory, for a TestMain whose tests start replicas as processes; the
// caller removes the directory (filepath.Dir of the path) when done.
func Hybridkv() (string, error) {
	dir, err := os.MkdirTemp("", "hybridkv-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hybridkv")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/hybridkv/hybridkv/cmd/hybridkv").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("build hybridkv: %v\n%s", err, out)
	}
	return bin, nil
}

// Etcdctl returns the path of an etcdctl binary: $ETCDCTL if set, else one
// built from go.etcd.io/etcd/etcdctl/v3 at EtcdctlVersion.
func Etcdctl(t testing.TB) string {
	if p := os.Getenv("ETCDCTL"); p != "" {
		return p
	}
	return cached(t, "etcdctl-"+EtcdctlVersion, func(dir, out string) error {
		if err := run(dir, "go", "mod", "init", "etcdctlbuild"); err != nil {
			return err
		}
		if err := run(dir, "go", "get", "go.etcd.io/etcd/etcdctl/v3@"+EtcdctlVersion); err != nil {
			return err
		}
		return run(dir, "go", "build", "-o", out, "go.etcd.io/etcd/etcdctl/v3")
	})
}

// GoYCSB returns the path of a go-ycsb binary: $GO_YCSB if set, else one
// built from github.com/pingcap/go-ycsb at GoYCSBVersion. Its module has
// replace directives, which go install refuses: it is built inside a copy
// of its own source.
func GoYCSB(t testing.TB) string {
	if p := os.Getenv("GO_YCSB"); p != "" {
		return p
	}
	return cached(t, "go-ycsb-"+GoYCSBVersion, func(dir, out string) error {
		src, err := output(dir, "go", "mod", "download", "-json", "github.com/pingcap/go-ycsb@"+GoYCSBVersion)
		if err != nil {
			return err
		}
		var module struct{ Dir string }
		if err := json.Unmarshal([]byte(src), &module); err != nil || module.Dir == "" {
			return fmt.Errorf("go mod download printed no module directory: %v: %s", err, src)
		}
		moduleDir := module.Dir
		copyDir := filepath.Join(dir, "go-ycsb")
		if err := run(dir, "cp", "-r", moduleDir, copyDir); err != nil {
			return err
		}
		if err := run(dir, "chmod", "-R", "u+w", copyDir); err != nil {
			return err
		}
		return run(copyDir, "go", "build", "-o", out, "./cmd/go-ycsb")
	})
}

// cached returns the binary name from the cache, building it with build
// (in a scratch directory, to the path given) when it is not there.
func cached(t testing.TB, name string, build func(dir, out string) error) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	out := filepath.Join(base, "hybridkv-tools", name)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Logf("building %s (cached in %s)", name, out)
	tmp := out + ".tmp"
	if err := build(dir, tmp); err != nil {
		t.Fatalf("building %s: %v (set the environment variable naming a prebuilt binary to use one)", name, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func run(dir, name string, args ...string) error {
	_, err := output(dir, name, args...)
	return err
}

func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// The scratch module must not inherit this module's workspace or flags.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
