package cluster

import (
	"context"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/transport"
)

// coreTimeout bounds how long a scrape waits for the replica's loop to hand
// over the core's metrics; a loop busy for longer than this is itself the
// news, counted in hybridkv_core_metrics_timeouts_total.
const coreTimeout = 500 * time.Millisecond

// durationBounds are the upper bounds of the duration histograms, from a
// tenth of a millisecond (a sync on a fast SSD) to ten seconds.
var durationBounds = []time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// cpuClasses adds the runtime's split of the process's time (the
// collector's marking, the scavenger, the program's own work) to the Go
// collector's defaults: a pause-time histogram does not show what marking a
// large heap costs beside the program. The runtime estimates these from
// the wall time its threads hold a processor, so on a machine with more
// runnable threads than cores they sum to more than process_cpu_seconds;
// their ratios are what they tell.
var cpuClasses = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/cpu/classes/`)}

// Registry returns a registry holding the replica's metrics and the Go
// runtime's and the process's, for the debug server's /metrics. Every
// value is read when scraped: nothing is added to the replica's hot paths.
func (s *Server) Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(cpuClasses)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newCollector(s),
	)
	return reg
}

// desc builds a metric description with the project's prefix.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("hybridkv_"+name, help, labels, nil)
}

var (
	// The core's view, copied out by the replica's loop (protocol.Metrics).
	descTerm          = desc("raft_term", "Current raft term.")
	descLeader        = desc("raft_leader_id", "ID of the replica this one believes leads; 0 when none is known.")
	descIsLeader      = desc("raft_is_leader", "1 if this replica leads, else 0.")
	descLeaderChanges = desc("raft_leader_changes_total", "Times this replica learned of a leader (a new one, or the same one after an election).")
	descCommit        = desc("raft_commit_index", "Highest log index known committed.")
	descApplied       = desc("raft_applied_index", "Highest log index applied to the key-value state.")
	descApplyLag      = desc("raft_apply_lag_entries", "Committed entries not yet applied here (commit index minus applied index).")
	descMatch         = desc("raft_follower_match_index", "On the leader: highest log index known replicated on each follower.", "peer")
	descFollowerLag   = desc("raft_follower_lag_entries", "On the leader: its commit index minus each follower's match index.", "peer")
	descLogEntries    = desc("raft_log_entries", "Raft log entries held in memory (compaction drops the older ones).")
	descLastIndex     = desc("raft_last_index", "Index of the last entry in the raft log.")
	descBatch         = desc("proposal_batch_ops", "Operations gathered for the next proposal batch, not yet proposed.")
	descInFlight      = desc("proposals_in_flight_ops", "Operations this leader proposed and has not applied.")
	descAwaiting      = desc("replies_awaited_ops", "Operations whose client is to be answered when they apply.")
	descKeys          = desc("store_keys", "Keys in the applied key-value state.")
	descSessions      = desc("session_table_sessions", "Client sessions in the session table: those that applied an operation within the session expiry.")
	descExpired       = desc("session_table_expired_total", "Sessions the session table forgot for being idle longer than the session expiry.")
	descReplies       = desc("session_table_replies", "Results the session table keeps for duplicate detection.")
	descTimeouts      = desc("core_metrics_timeouts_total", "Scrapes that found the replica's loop too busy to report the core's metrics in time.")

	// The runtime and the transport.
	descInbox         = desc("runtime_inbox_messages", "Messages received and not yet handed to the protocol core.")
	descWrites        = desc("runtime_disk_writes_waiting", "Rounds of the protocol core whose disk writes are not done yet, the one being written included.")
	descConns         = desc("transport_connections", "Open connections messages to a peer leave on (peer \"clients\": every client).", "peer")
	descQueueBytes    = desc("transport_send_queue_bytes", "Encoded frames waiting to be written to a peer.", "peer")
	descDelayedFrames = desc("transport_delayed_frames", "Frames held back by the emulated wide-area delay.", "peer")
	descSentBytes     = desc("transport_sent_bytes_total", "Frame bytes written to a peer.", "peer")
	descRecvBytes     = desc("transport_received_bytes_total", "Frame bytes read from a peer.", "peer")
	descSentMsgs      = desc("transport_sent_messages_total", "Messages queued on a connection.")
	descDroppedMsgs   = desc("transport_dropped_messages_total", "Messages dropped: no connection, or its queue full.")
	descRecvMsgs      = desc("transport_received_messages_total", "Messages received.")

	// The disk.
	descFsync     = desc("disk_fsync_duration_seconds", "Duration of the raft log saves that synced (write and fsync).")
	descSnapTime  = desc("snapshot_save_duration_seconds", "Duration of snapshot saves (file and log marker).")
	descSnapBytes = desc("snapshot_saved_bytes_total", "Bytes of snapshot data saved.")
	descSnapSize  = desc("snapshot_size_bytes", "Bytes of snapshot files on disk.")
	descWALSize   = desc("wal_size_bytes", "Bytes of raft log files on disk.")
)

// collector reads a replica's state when scraped.
type collector struct {
	s        *Server
	timeouts atomic.Uint64
}

func newCollector(s *Server) *collector { return &collector{s: s} }

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descTerm, descLeader, descIsLeader, descLeaderChanges, descCommit, descApplied, descApplyLag,
		descMatch, descFollowerLag, descLogEntries, descLastIndex, descBatch, descInFlight, descAwaiting,
		descKeys, descSessions, descExpired, descReplies, descTimeouts, descInbox, descWrites, descConns, descQueueBytes, descDelayedFrames, descSentBytes,
		descRecvBytes, descSentMsgs, descDroppedMsgs, descRecvMsgs, descFsync, descSnapTime, descSnapBytes,
		descSnapSize, descWALSize,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), coreTimeout)
	m, err := c.s.Node.Metrics(ctx)
	cancel()
	if err == nil {
		collectCore(ch, m)
	} else {
		c.timeouts.Add(1)
	}
	ch <- counter(descTimeouts, float64(c.timeouts.Load()))
	ch <- gauge(descInbox, float64(c.s.InboxLen()))
	ch <- gauge(descWrites, float64(c.s.WritesWaiting()))
	collectTransport(ch, c.s.Transport())
	c.collectDisk(ch)
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// lag is a-b, or 0 where b is ahead (a follower's match can pass the
// leader's commit index for a moment).
func lag(a, b uint64) float64 {
	if b >= a {
		return 0
	}
	return float64(a - b)
}

func collectCore(ch chan<- prometheus.Metric, m protocol.Metrics) {
	ch <- gauge(descTerm, float64(m.Term))
	ch <- gauge(descLeader, float64(m.Leader))
	ch <- gauge(descIsLeader, boolValue(m.Leader != 0 && m.Leader == m.ID))
	ch <- counter(descLeaderChanges, float64(m.LeaderChanges))
	ch <- gauge(descCommit, float64(m.Commit))
	ch <- gauge(descApplied, float64(m.Applied))
	ch <- gauge(descApplyLag, lag(m.Commit, m.Applied))
	for _, f := range m.Followers {
		peer := strconv.FormatUint(uint64(f.ID), 10)
		ch <- gauge(descMatch, float64(f.Match), peer)
		ch <- gauge(descFollowerLag, lag(m.Commit, f.Match), peer)
	}
	entries := 0.0
	if m.LogLast >= m.LogFirst {
		entries = float64(m.LogLast - m.LogFirst + 1)
	}
	ch <- gauge(descLogEntries, entries)
	ch <- gauge(descLastIndex, float64(m.LogLast))
	ch <- gauge(descBatch, float64(m.Batch))
	ch <- gauge(descInFlight, float64(m.InFlight))
	ch <- gauge(descAwaiting, float64(m.AwaitingReply))
	ch <- gauge(descKeys, float64(m.Keys))
	ch <- gauge(descSessions, float64(m.Sessions))
	ch <- gauge(descReplies, float64(m.Replies))
	ch <- counter(descExpired, float64(m.SessionsExpired))
	// The protocol's own, described by the protocol (not by Describe:
	// the registry is not pedantic, so they need not be declared).
	for _, x := range m.Own {
		d := desc(x.Name, x.Help)
		if x.Counter {
			ch <- counter(d, x.Value)
		} else {
			ch <- gauge(d, x.Value)
		}
	}
}

// peerLabel names a peer in labels: its ID, or "clients".
func peerLabel(id uint64) string {
	if id == uint64(transport.Clients) {
		return "clients"
	}
	return strconv.FormatUint(id, 10)
}

func collectTransport(ch chan<- prometheus.Metric, tr *transport.Transport) {
	for _, ps := range tr.PeerStats() {
		peer := peerLabel(uint64(ps.Peer))
		ch <- gauge(descConns, float64(ps.Connections), peer)
		ch <- gauge(descQueueBytes, float64(ps.QueuedBytes), peer)
		ch <- gauge(descDelayedFrames, float64(ps.QueuedFrames), peer)
		ch <- counter(descSentBytes, float64(ps.BytesSent), peer)
		ch <- counter(descRecvBytes, float64(ps.BytesReceived), peer)
	}
	st := tr.Stats()
	ch <- counter(descSentMsgs, float64(st.Sent))
	ch <- counter(descDroppedMsgs, float64(st.Dropped))
	ch <- counter(descRecvMsgs, float64(st.Received))
}

func (c *collector) collectDisk(ch chan<- prometheus.Metric) {
	tm := c.s.Disk.Timings(durationBounds)
	ch <- histogram(descFsync, tm.Syncs.Count, tm.Syncs.Sum, tm.Syncs.Buckets)
	ch <- histogram(descSnapTime, tm.Snapshots.Count, tm.Snapshots.Sum, tm.Snapshots.Buckets)
	ch <- counter(descSnapBytes, float64(tm.SnapshotBytes))
	st := c.s.Disk.Stats()
	ch <- gauge(descSnapSize, float64(st.SnapBytes))
	ch <- gauge(descWALSize, float64(st.WALBytes))
}

func histogram(d *prometheus.Desc, count uint64, sum time.Duration, buckets []uint64) prometheus.Metric {
	bs := make(map[float64]uint64, len(buckets))
	for i, n := range buckets {
		bs[durationBounds[i].Seconds()] = n
	}
	return prometheus.MustNewConstHistogram(d, count, sum.Seconds(), bs)
}
