package etcdapi_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/tooltest"
)

// TestGoYCSB runs go-ycsb's etcd binding, workloads A to F, against a
// curp-ho and a raft cluster of separate processes through a gateway.
// Every operation of A, B, C, D and F succeeds. E's scans fail in the
// binding itself, as they do against etcd: it reads WithFromKey and
// WithLimit(n) and then demands that the response's Count, which in etcd's
// API counts every key from the start key on (not only the n returned),
// equal n. The gateway answers as etcd does; E's inserts succeed.
func TestGoYCSB(t *testing.T) {
	ycsb := tooltest.GoYCSB(t)
	workloads := goYCSBWorkloads(t)
	for _, proto := range []string{"curp-ho", "raft"} {
		t.Run(proto, func(t *testing.T) {
			p := startProcesses(t, proto, 1)
			run := func(phase, workload string, extra ...string) string {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				args := append([]string{phase, "etcd", "-P", filepath.Join(workloads, workload),
					"-p", "etcd.endpoints=" + p.gateway, "-p", "recordcount=500", "-p", "operationcount=500",
					"-p", "threadcount=4"}, extra...)
				out, err := exec.CommandContext(ctx, ycsb, args...).CombinedOutput()
				require.NoError(t, err, "%s", out)
				return string(out)
			}
			t.Log(run("load", "workloada"))
			for _, w := range []string{"workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf"} {
				out := run("run", w)
				t.Logf("%s:\n%s", w, out)
				errs := ycsbCounts(regexp.MustCompile(`(?m)^(\w+)_ERROR .*Count: (\d+)`), out)
				done := ycsbCounts(regexp.MustCompile(`(?m)^(\w+) +- .*Count: (\d+)`), out)
				if w == "workloade" {
					require.Len(t, errs, 1, "only scans fail: %v", errs)
					require.Positive(t, errs["SCAN"])
					require.Positive(t, done["INSERT"])
					continue
				}
				require.Empty(t, errs, "%s: operations failed", w)
				require.GreaterOrEqual(t, done["TOTAL"], 500, "%s: operations done (a read-modify-write counts its read and its update too)", w)
			}
		})
	}
}

// ycsbCounts maps each operation name the pattern matches to its count.
func ycsbCounts(re *regexp.Regexp, out string) map[string]int {
	counts := map[string]int{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[2])
		counts[m[1]] += n
	}
	return counts
}

// goYCSBWorkloads is the directory of go-ycsb's workload files, in the
// module cache next to the source the binary was built from.
func goYCSBWorkloads(t *testing.T) string {
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/pingcap/go-ycsb@"+tooltest.GoYCSBVersion).Output()
	require.NoError(t, err)
	m := regexp.MustCompile(`"Dir": "([^"]+)"`).FindStringSubmatch(string(out))
	require.NotNil(t, m, "%s", out)
	return filepath.Join(m[1], "workloads")
}
