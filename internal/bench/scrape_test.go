package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/probe"
)

// exposition is a replica's /metrics body as the debug server writes it,
// with n as the commit index.
func exposition(n int64) string {
	return fmt.Sprintf(`# HELP hybridkv_raft_commit_index Highest log index known committed.
# TYPE hybridkv_raft_commit_index gauge
hybridkv_raft_commit_index %d
# HELP hybridkv_transport_sent_bytes_total Frame bytes written to a peer.
# TYPE hybridkv_transport_sent_bytes_total counter
hybridkv_transport_sent_bytes_total{peer="2"} 100
hybridkv_transport_sent_bytes_total{peer="clients"} 7
# HELP hybridkv_disk_fsync_duration_seconds Duration of syncs.
# TYPE hybridkv_disk_fsync_duration_seconds histogram
hybridkv_disk_fsync_duration_seconds_bucket{le="0.001"} 3
hybridkv_disk_fsync_duration_seconds_bucket{le="+Inf"} 4
hybridkv_disk_fsync_duration_seconds_sum 0.5
hybridkv_disk_fsync_duration_seconds_count 4
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 3.5e+07
# HELP go_threads Number of OS threads created.
# TYPE go_threads gauge
go_threads 9
`, n)
}

func TestParseMetrics(t *testing.T) {
	got, err := parseMetrics(strings.NewReader(exposition(42)))
	require.NoError(t, err)
	require.Equal(t, map[string]float64{
		"hybridkv_raft_commit_index":                          42,
		`hybridkv_transport_sent_bytes_total{peer="2"}`:       100,
		`hybridkv_transport_sent_bytes_total{peer="clients"}`: 7,
		"hybridkv_disk_fsync_duration_seconds_count":          4,
		"hybridkv_disk_fsync_duration_seconds_sum":            0.5,
		"process_resident_memory_bytes":                       3.5e7,
	}, got, "histograms flatten to count and sum; metrics not kept are left out")
	_, err = parseMetrics(strings.NewReader("not the exposition format {"))
	require.Error(t, err)
}

// TestScraper scrapes a live replica and a dead one every 10 ms, then
// writes what it kept.
func TestScraper(t *testing.T) {
	var commit atomic.Int64
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, exposition(commit.Add(1)))
	}))
	defer live.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	defer dead.Close()
	addr := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

	start := time.Now()
	s := startScraper(start, 10*time.Millisecond, func() []target {
		return []target{{ID: 1, Addr: addr(live)}, {ID: 2, Addr: addr(dead)}}
	})
	require.Eventually(t, func() bool { return commit.Load() >= 5 }, 5*time.Second, time.Millisecond)
	rounds := s.stop()
	n := commit.Load()
	time.Sleep(30 * time.Millisecond)
	require.Equal(t, n, commit.Load(), "scraping goes on after stop")

	require.GreaterOrEqual(t, len(rounds), 4)
	for i, rd := range rounds {
		require.Equal(t, 1, rd.Errors, "the dead replica fails every round")
		require.Len(t, rd.Values, 1)
		require.Equal(t, float64(i+1), rd.Values[1]["hybridkv_raft_commit_index"], "rounds in order")
		require.Positive(t, rd.Seconds)
		if i > 0 {
			require.Greater(t, rd.Seconds, rounds[i-1].Seconds)
		}
	}

	var buf bytes.Buffer
	require.NoError(t, writeSeriesCSV(&buf, rounds[:2], nil))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"seconds", "replica", "metric", "value"}, rows[0])
	require.Len(t, rows, 1+2*6, "a row per series per round")
	require.Equal(t, []string{"1", "hybridkv_disk_fsync_duration_seconds_count", "4"}, rows[1][1:])
	require.Equal(t, []string{"1", `hybridkv_transport_sent_bytes_total{peer="2"}`, "100"}, rows[4][1:])
	require.Equal(t, "2", rows[1+6+2][3], "the second round's commit index")

	buf.Reset()
	machine := []probe.Sample{{Seconds: 1.5, Loads: 1000, LoadCPU: 250 * time.Microsecond, Steps: 4000, StepsCPU: 7 * time.Microsecond}}
	require.NoError(t, writeSeriesCSV(&buf, rounds[:1], machine))
	rows, err = csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+6+3, "the probe's rows follow the rounds'")
	require.Equal(t, [][]string{
		{"1.500", "probe", "probe_load_ns", "250.00"},
		{"1.500", "probe", "probe_step_ns", "1.7500"},
		{"1.500", "probe", "probe_loads", "1000"},
	}, rows[7:])
}

func TestNilScraper(t *testing.T) {
	var s *scraper
	require.Nil(t, s.stop())
}

// TestScraperReadsReplicasAtOnce: each replica answers only once the other's
// scrape has arrived too (or after 500 ms, saying it was alone). Read one
// after the other, a follower's applied index and the leader's commit index
// came from different moments.
func TestScraperReadsReplicasAtOnce(t *testing.T) {
	var arrived atomic.Int64
	both := make(chan struct{})
	replica := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if arrived.Add(1) == 2 {
			close(both)
		}
		together := int64(2)
		select {
		case <-both:
		case <-time.After(500 * time.Millisecond):
			together = 1
		}
		fmt.Fprint(w, exposition(together))
	}))
	defer replica.Close()
	addr := strings.TrimPrefix(replica.URL, "http://")
	s := &scraper{start: time.Now(), client: &http.Client{Timeout: scrapeTimeout},
		targets: func() []target { return []target{{ID: 1, Addr: addr}, {ID: 2, Addr: addr}} }}
	s.scrapeAll(context.Background())
	require.Len(t, s.rounds, 1)
	for id := uint64(1); id <= 2; id++ {
		require.Equal(t, 2.0, s.rounds[0].Values[id]["hybridkv_raft_commit_index"], "replica %d was read alone", id)
	}
}
