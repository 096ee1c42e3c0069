package stats

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/stretchr/testify/require"
)

// sampleClients builds two clients measured over [t0+1s, t0+3s): the first
// does strong writes of 50 ms, 3 fast and 1 slow, the second weak reads of
// 2 ms; each also completes one operation during warm-up.
func sampleClients() []ClientRecorder {
	win := func(r *Recorder) *Recorder { r.SetWindow(t0.Add(time.Second), t0.Add(3*time.Second)); return r }
	a, b := win(NewRecorder(t0)), win(NewRecorder(t0))
	for i := range 4 {
		path := clientcore.PathFast
		if i == 3 {
			path = clientcore.PathSlow
		}
		a.Record(StrongWrite, 50*time.Millisecond, path, t0.Add(1500*time.Millisecond))
		if path == clientcore.PathSlow {
			a.RecordSlowReason(clientcore.ReasonConflict, t0.Add(1500*time.Millisecond))
		}
	}
	// Outside the window: not counted.
	a.RecordSlowReason(clientcore.ReasonReadDep, t0.Add(500*time.Millisecond))
	for range 6 {
		b.Record(WeakRead, 2*time.Millisecond, clientcore.PathWeak, t0.Add(2500*time.Millisecond))
	}
	b.RecordFailure(WeakRead, t0.Add(2*time.Second))
	a.Record(StrongWrite, 50*time.Millisecond, clientcore.PathFast, t0.Add(500*time.Millisecond))
	b.Record(WeakRead, 2*time.Millisecond, clientcore.PathWeak, t0.Add(500*time.Millisecond))
	return []ClientRecorder{{"client-a", a}, {"client-b", b}}
}

func sampleReport() *Report {
	run := Run{Protocol: "curp-ht", Replicas: 3, Clients: 2, SessionsPerClient: 8, Label: "smoke"}
	cpu := []CPUUsage{{"replica1", 0.004}, {"client-a", 0.001}}
	return BuildReport(run, sampleClients(), cpu, "emulated 25 ms one-way delay")
}

func TestBuildReport(t *testing.T) {
	r := sampleReport()
	require.Equal(t, "curp-ht", r.Protocol)
	require.Equal(t, t0, r.Started)
	require.Equal(t, 1.0, r.WindowOffsetSeconds)
	require.Equal(t, 2.0, r.WindowSeconds)
	require.Equal(t, int64(10), r.Ops)
	require.Equal(t, int64(1), r.Failed)
	require.Equal(t, int64(2), r.Excluded)
	require.Equal(t, 5.0, r.Throughput)
	require.Equal(t, []float64{2, 4, 6}, r.PerSecond)
	require.Len(t, r.Classes, 2)
	require.Equal(t, int64(4), r.Classes["strong-write"].Count)
	require.InEpsilon(t, 50.0, r.Classes["strong-write"].P50Ms, 0.001)
	require.InEpsilon(t, 2.0, r.Classes["weak-read"].P99Ms, 0.001)
	require.Equal(t, int64(10), r.All.Count)
	require.InEpsilon(t, (4*50+6*2)/10.0, r.All.AvgMs, 1e-9)
	require.Equal(t, map[string]int64{"fast": 3, "slow": 1, "weak": 6}, r.Paths)
	require.True(t, r.FastPathKnown)
	require.Equal(t, 0.75, r.FastPathRatio)
	require.InEpsilon(t, 500.0, r.CPUMicrosPerOp, 1e-9) // 5 ms of CPU over 10 ops
	require.Len(t, r.PerClient, 2)
	require.Equal(t, "client-b", r.PerClient[1].Name)
	require.Equal(t, int64(6), r.PerClient[1].Ops)
	require.Equal(t, int64(1), r.PerClient[1].Failed)
	require.Equal(t, 3.0, r.PerClient[1].Throughput)
	require.Contains(t, r.PerClient[1].Classes, "weak-read")
	require.NotContains(t, r.PerClient[1].Classes, "strong-write")
	require.Len(t, r.Notes, 2)
	require.Contains(t, r.Notes[0], "1 operations failed")
	require.Equal(t, "emulated 25 ms one-way delay", r.Notes[1])
}

func TestReportWithoutOperations(t *testing.T) {
	for name, clients := range map[string][]ClientRecorder{
		"no clients":    nil,
		"idle clients":  {{"idle", NewRecorder(t0)}},
		"weak only run": {{"weak", weakOnly()}},
	} {
		t.Run(name, func(t *testing.T) {
			r := BuildReport(Run{Protocol: "raft"}, clients, []CPUUsage{{"replica1", 1}})
			require.False(t, r.FastPathKnown)
			require.Zero(t, r.FastPathRatio)
			require.Contains(t, r.Notes[0], "fast-path ratio undefined")
			var b bytes.Buffer
			require.NoError(t, r.WriteJSON(&b), "every number is finite")
			require.NoError(t, r.WriteTable(&b))
			require.Contains(t, b.String(), "fast path n/a")
		})
	}
}

func weakOnly() *Recorder {
	r := NewRecorder(t0)
	r.Record(WeakWrite, time.Millisecond, clientcore.PathWeak, t0.Add(time.Second))
	return r
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport().WriteTable(&b))
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t,
		"curp-ht | 3 replicas | 2 clients x 8 sessions | 5.0 ops/s | fast path 75.0% | cpu 500.0 µs/op | smoke",
		lines[0])
	require.Equal(t, "window 2.0 s starting at +1.0 s | ops 10 | failed 1 | excluded 2", lines[1])
	require.Equal(t, "paths: fast 3 (avg 50.00 ms), slow 1 (avg 50.00 ms), weak 6 (avg 2.00 ms) | slow because: conflict 1", lines[2])
	require.Regexp(t, `^  class\s+count\s+avg ms\s+p50 ms\s+p99 ms\s+p99.9 ms\s+max ms$`, lines[3])
	require.Regexp(t, `^  strong-write\s+4\s+50.00\s+50.0\d\s+50.0\d\s+50.0\d\s+50.00$`, lines[4])
	require.Regexp(t, `^  weak-read\s+6\s+2.00\s+2.00\s+2.00\s+2.00\s+2.00$`, lines[5])
	// With both levels present, each level gets a combined row.
	require.Regexp(t, `^  strong\s+4\s+50.00\s+`, lines[6])
	require.Regexp(t, `^  weak\s+6\s+2.00\s+`, lines[7])
	require.Regexp(t, `^  all\s+10\s+21.20\s+`, lines[8])
	require.Regexp(t, `^  client\s+ops\s+failed\s+ops/s\s+strong-write p50 ms`, lines[9])
	require.Regexp(t, `^  client-a\s+4\s+0\s+2.0\s+50.0\d\s+-\s+-\s+-$`, lines[10])
	require.Regexp(t, `^  client-b\s+6\s+1\s+3.0\s+-\s+-\s+-\s+2.00$`, lines[11])
	require.Equal(t, "cpu: replica1 0.00 s, client-a 0.00 s", lines[12])
	require.Equal(t, "note: emulated 25 ms one-way delay", lines[len(lines)-1])
}

// TestWriteTableWithScans: scans get rows of their own, apart from the
// single-key reads of their level, and the clients' table a column for
// each scan class only when the run had scans of it.
func TestWriteTableWithScans(t *testing.T) {
	r := NewRecorder(t0)
	r.Record(WeakRead, time.Millisecond, clientcore.PathWeak, t0.Add(time.Second))
	r.Record(WeakScan, 40*time.Millisecond, clientcore.PathWeak, t0.Add(time.Second))
	r.Record(StrongWrite, 60*time.Millisecond, clientcore.PathFast, t0.Add(time.Second))
	rep := BuildReport(Run{Protocol: "curp-ht"}, []ClientRecorder{{Name: "c", Recorder: r}}, nil)
	require.Equal(t, int64(1), rep.Classes["weak-scan"].Count)
	require.InEpsilon(t, 40.0, rep.Classes["weak-scan"].AvgMs, 1e-9)
	require.InEpsilon(t, 1.0, rep.Classes["weak-read"].AvgMs, 1e-9)
	require.Equal(t, int64(2), rep.Weak.Count, "a level combines its reads and scans")
	var b bytes.Buffer
	require.NoError(t, rep.WriteTable(&b))
	out := b.String()
	require.Regexp(t, `(?m)^  weak-read\s+1\s+1.00\s+.*\n  weak-scan\s+1\s+40.00\s+`, out)
	require.Regexp(t, `(?m)^  client\s+ops\s+failed\s+ops/s\s+strong-write p50 ms\s+strong-read p50 ms\s+weak-write p50 ms\s+weak-read p50 ms\s+weak-scan p50 ms$`, out)
	require.NotContains(t, out, "strong-scan", "no strong scans, no column")

	b.Reset()
	require.NoError(t, sampleReport().WriteTable(&b))
	require.NotContains(t, b.String(), "scan", "a run without scans shows none")
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	want := sampleReport()
	require.NoError(t, want.WriteJSON(&b))
	for _, key := range []string{
		`"protocol": "curp-ht"`, `"sessions_per_client": 8`, `"window_seconds": 2`, `"ops": 10`,
		`"throughput": 5`, `"per_second": [`, `"strong-write": {`, `"p999_ms": `, `"fast_path_ratio": 0.75`,
		`"fast_path_known": true`, `"per_client": [`, `"cpu_micros_per_op": 500`, `"name": "replica1"`,
	} {
		require.Contains(t, b.String(), key)
	}
	var got Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	require.Equal(t, want.Classes, got.Classes)
	require.Equal(t, want.PerClient, got.PerClient)
	require.True(t, want.Started.Equal(got.Started))
	require.Equal(t, want.Notes, got.Notes)
}

// TestPathMeans: each path's mean latency is over that path's completions
// only, across classes and across merged recorders.
func TestPathMeans(t *testing.T) {
	a, b := NewRecorder(t0), NewRecorder(t0)
	a.Record(StrongRead, time.Millisecond, clientcore.PathFast, t0.Add(time.Second))
	a.Record(StrongWrite, 3*time.Millisecond, clientcore.PathFast, t0.Add(time.Second))
	a.Record(StrongRead, 9*time.Millisecond, clientcore.PathSlow, t0.Add(time.Second))
	b.Record(StrongRead, 5*time.Millisecond, clientcore.PathFast, t0.Add(time.Second))
	b.Record(WeakRead, 20*time.Millisecond, clientcore.PathWeak, t0.Add(time.Second))
	a.Merge(b)
	r := BuildReport(Run{Protocol: "curp"}, []ClientRecorder{{Name: "c", Recorder: a}}, nil, "")
	require.Equal(t, map[string]float64{"fast": 3, "slow": 9, "weak": 20}, r.PathMeanMs)
	var out bytes.Buffer
	require.NoError(t, r.WriteTable(&out))
	require.Contains(t, out.String(), "paths: fast 3 (avg 3.00 ms), slow 1 (avg 9.00 ms), weak 1 (avg 20.00 ms)")
}
