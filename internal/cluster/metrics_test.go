package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
)

// scrape fetches and parses a debug server's /metrics.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// value is the value of the family's sample whose labels match (label,
// value pairs), or fails the test.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "no metric %s", name)
	for _, m := range f.GetMetric() {
		if hasLabels(m, labels) {
			switch {
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no sample of %s with labels %v", name, labels)
	return 0
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
			return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
		}) {
			return false
		}
	}
	return true
}

// TestDebugMetrics scrapes every replica of a running cluster after some
// writes and checks the metrics are there and agree with what happened.
func TestDebugMetrics(t *testing.T) {
	cfg, l := startCluster(t, 3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := newClient(t, cfg, cfg.Sites[0]).NewSession()
	const writes = 20
	for k := range uint64(writes) {
		_, err := s.Do(ctx, client.Put, fmt.Sprint(k), []byte("v"), client.Strong)
		require.NoError(t, err)
	}

	urls := make([]string, len(l.Replicas))
	for i, srv := range l.Replicas {
		ts := httptest.NewServer(srv.DebugHandler())
		t.Cleanup(ts.Close)
		urls[i] = ts.URL
	}
	// Followers learn the last commit index with the next message.
	require.Eventually(t, func() bool {
		for _, u := range urls {
			if value(t, scrape(t, u), "hybridkv_store_keys") != writes {
				return false
			}
		}
		return true
	}, 5*time.Second, 20*time.Millisecond, "every replica applies the writes")

	leaders := 0
	for i, u := range urls {
		fams := scrape(t, u)
		id := cfg.Replicas[i].ID
		for _, name := range []string{
			"hybridkv_raft_term", "hybridkv_raft_leader_id", "hybridkv_raft_leader_changes_total",
			"hybridkv_raft_apply_lag_entries", "hybridkv_raft_log_entries", "hybridkv_proposal_batch_ops",
			"hybridkv_proposals_in_flight_ops", "hybridkv_session_table_replies", "hybridkv_witness_pool_records",
			"hybridkv_runtime_inbox_messages", "hybridkv_runtime_disk_writes_waiting", "hybridkv_snapshot_save_duration_seconds",
			"hybridkv_snapshot_size_bytes", "hybridkv_core_metrics_timeouts_total",
			"go_gc_duration_seconds", "go_goroutines",
		} {
			require.Contains(t, fams, name)
		}
		require.NotContains(t, fams, "hybridkv_curp_parked_reads", "a protocol exports its own metrics only: CURP has no weak reads")
		require.Positive(t, value(t, fams, "process_resident_memory_bytes"))
		require.Positive(t, value(t, fams, "hybridkv_disk_fsync_duration_seconds"), "fsync is on by default")
		require.GreaterOrEqual(t, value(t, fams, "hybridkv_raft_leader_changes_total"), 1.0)
		commit, applied := value(t, fams, "hybridkv_raft_commit_index"), value(t, fams, "hybridkv_raft_applied_index")
		require.GreaterOrEqual(t, commit, float64(writes))
		require.Equal(t, commit-applied, value(t, fams, "hybridkv_raft_apply_lag_entries"))
		require.Equal(t, 1.0, value(t, fams, "hybridkv_session_table_sessions"), "one client session wrote")
		require.Zero(t, value(t, fams, "hybridkv_core_metrics_timeouts_total"))

		var peers []string
		for _, r := range cfg.Replicas {
			if r.ID != id {
				peers = append(peers, strconv.FormatUint(r.ID, 10))
			}
		}
		// Followers talk to the leader only (and to each other only if one
		// campaigned): check the links to and from the leader.
		leader := strconv.FormatUint(uint64(value(t, fams, "hybridkv_raft_leader_id")), 10)
		for _, p := range peers {
			if p != leader && leader != strconv.FormatUint(id, 10) {
				continue
			}
			require.Positive(t, value(t, fams, "hybridkv_transport_sent_bytes_total", "peer", p))
			require.Positive(t, value(t, fams, "hybridkv_transport_received_bytes_total", "peer", p))
			require.Equal(t, 1.0, value(t, fams, "hybridkv_transport_connections", "peer", p))
		}
		value(t, fams, "hybridkv_transport_delayed_frames", "peer", "clients")

		if value(t, fams, "hybridkv_raft_is_leader") == 1 {
			leaders++
			require.Equal(t, float64(id), value(t, fams, "hybridkv_raft_leader_id"))
			require.Len(t, fams["hybridkv_raft_follower_match_index"].GetMetric(), len(peers))
			for _, p := range peers {
				require.Equal(t, commit, value(t, fams, "hybridkv_raft_follower_match_index", "peer", p),
					"idle followers match the leader")
				require.Zero(t, value(t, fams, "hybridkv_raft_follower_lag_entries", "peer", p))
			}
			require.Positive(t, value(t, fams, "hybridkv_transport_received_bytes_total", "peer", "clients"))
		} else {
			require.NotContains(t, fams, "hybridkv_raft_follower_match_index", "only the leader knows followers' progress")
		}
	}
	require.Equal(t, 1, leaders)

	resp, err := http.Get(urls[0] + "/status")
	require.NoError(t, err)
	defer resp.Body.Close()
	var st cluster.ServerStatus
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	require.Equal(t, cfg.Replicas[0].ID, uint64(st.ID), fmt.Sprintf("status: %+v", st))
}
