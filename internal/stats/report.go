package stats

import (
	"fmt"
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcore"
)

// Report is the result of a benchmark run, as printed and as saved in JSON.
// Every number is finite, so the JSON always encodes.
type Report struct {
	Protocol          string `json:"protocol"`
	Replicas          int    `json:"replicas"`
	Clients           int    `json:"clients"`
	SessionsPerClient int    `json:"sessions_per_client"`
	Label             string `json:"label,omitempty"`

	// Started is when the run started; PerSecond[i] counts completions in
	// second i after it. The measured window begins WindowOffsetSeconds
	// after Started and lasts WindowSeconds.
	Started             time.Time `json:"started"`
	WindowOffsetSeconds float64   `json:"window_offset_seconds"`
	WindowSeconds       float64   `json:"window_seconds"`

	// Ops and Failed count operations ending inside the window; Excluded
	// those ending outside it (warm-up and cool-down).
	Ops        int64   `json:"ops"`
	Failed     int64   `json:"failed"`
	Excluded   int64   `json:"excluded"`
	Throughput float64 `json:"throughput"`
	// PerSecond is the timeline of the whole run, warm-up included.
	PerSecond []float64 `json:"per_second"`

	// Classes is keyed by Class.String() and holds only classes with
	// completed operations; All covers every class.
	Classes map[string]ClassSummary `json:"classes"`
	All     ClassSummary            `json:"all"`
	// Strong and Weak combine the classes of each level.
	Strong ClassSummary `json:"strong"`
	Weak   ClassSummary `json:"weak"`
	// Paths counts completions by clientcore.Path.String().
	Paths map[string]int64 `json:"paths"`
	// PathMeanMs is the mean latency of each path's completions, in ms.
	PathMeanMs map[string]float64 `json:"path_mean_ms"`
	// FastPathRatio is fast / (fast + slow) over strong operations;
	// FastPathKnown is false, and the ratio 0, when no strong operation
	// took either path.
	FastPathRatio float64 `json:"fast_path_ratio"`
	FastPathKnown bool    `json:"fast_path_known"`
	// SlowReasons counts strong operations that took the slow path, by why
	// they left the fast path.
	SlowReasons map[string]int64 `json:"slow_reasons,omitempty"`

	PerClient []ClientSummary `json:"per_client"`

	// CPU lists the CPU time each process spent during the run;
	// CPUMicrosPerOp divides their sum by Ops.
	CPU            []CPUUsage `json:"cpu,omitempty"`
	CPUMicrosPerOp float64    `json:"cpu_micros_per_op"`

	// OverTime is filled in by the runner when it could scrape the
	// replicas' metrics during the run.
	OverTime *OverTime `json:"over_time,omitempty"`

	Notes []string `json:"notes,omitempty"`

	// Faults are the faults a nemesis injected, in order, and FaultSites
	// the client sites their unavailability is measured at.
	Faults     []Fault  `json:"faults,omitempty"`
	FaultSites []string `json:"fault_sites,omitempty"`
	// Timeline is throughput over time per class, kept for runs with
	// faults.
	Timeline *Timeline `json:"timeline,omitempty"`
}

// ClientSummary is one client process's share of a run.
type ClientSummary struct {
	Name       string                  `json:"name"`
	Ops        int64                   `json:"ops"`
	Failed     int64                   `json:"failed"`
	Throughput float64                 `json:"throughput"`
	Classes    map[string]ClassSummary `json:"classes"`
}

// CPUUsage is the CPU time, user plus system, one process used.
type CPUUsage struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Run describes the benchmarked deployment for a report.
type Run struct {
	Protocol          string
	Replicas          int
	Clients           int
	SessionsPerClient int
	Label             string
}

// ClientRecorder is the merged recorder of one client process.
type ClientRecorder struct {
	Name     string
	Recorder *Recorder
}

// BuildReport merges the clients' recorders into a report. The window is
// the recorders' (they should share one); cpu should cover the same span
// as the operations counted, or CPUMicrosPerOp overstates the cost. notes
// are added after the ones the report derives itself.
func BuildReport(run Run, clients []ClientRecorder, cpu []CPUUsage, notes ...string) *Report {
	all := mergeClients(clients)
	r := &Report{
		Protocol:          run.Protocol,
		Replicas:          run.Replicas,
		Clients:           run.Clients,
		SessionsPerClient: run.SessionsPerClient,
		Label:             run.Label,
		Started:           all.start,
		WindowSeconds:     all.windowSeconds(),
		Ops:               all.Ops(),
		Failed:            all.Failed(),
		Excluded:          all.Excluded(),
		Throughput:        all.Throughput(),
		PerSecond:         perSecond(all),
		Classes:           classSummaries(all),
		All:               all.Total(),
		Strong:            all.Combined(Class.IsStrong),
		Weak:              all.Combined(func(c Class) bool { return !c.IsStrong() }),
		SlowReasons:       all.SlowReasons(),
		CPU:               cpu,
	}
	if from, _ := all.windowBounds(); from.After(all.start) {
		r.WindowOffsetSeconds = from.Sub(all.start).Seconds()
	}
	r.Paths, r.PathMeanMs = pathStats(all)
	r.FastPathRatio, r.FastPathKnown = all.FastPathRatio()
	r.PerClient = make([]ClientSummary, 0, len(clients))
	for _, c := range clients {
		r.PerClient = append(r.PerClient, clientSummary(c))
	}
	r.CPUMicrosPerOp = cpuMicrosPerOp(cpu, r.Ops)
	r.Notes = append(derivedNotes(all), notes...)
	return r
}

// mergeClients merges every client into a recorder starting at the
// earliest client's start, so no client's timeline is cut off.
func mergeClients(clients []ClientRecorder) *Recorder {
	if len(clients) == 0 {
		return NewRecorder(time.Time{})
	}
	start := clients[0].Recorder.start
	for _, c := range clients[1:] {
		if c.Recorder.start.Before(start) {
			start = c.Recorder.start
		}
	}
	all := NewRecorder(start)
	all.SetWindow(clients[0].Recorder.winStart, clients[0].Recorder.winEnd)
	for _, c := range clients {
		all.Merge(c.Recorder)
	}
	return all
}

func perSecond(r *Recorder) []float64 {
	out := make([]float64, len(r.timeline))
	for i, n := range r.timeline {
		out[i] = float64(n)
	}
	return out
}

func classSummaries(r *Recorder) map[string]ClassSummary {
	m := make(map[string]ClassSummary)
	for _, c := range classes {
		if s := r.Summary(c); s.Count > 0 {
			m[c.String()] = s
		}
	}
	return m
}

// pathStats counts the window's completions by path name, and gives each
// path's mean latency in ms.
func pathStats(r *Recorder) (counts map[string]int64, meanMs map[string]float64) {
	counts = make(map[string]int64)
	sums := make(map[string]time.Duration)
	for _, c := range classes {
		for p := range numPaths {
			path := clientcore.Path(p)
			if n := r.PathCount(c, path); n > 0 {
				counts[path.String()] += n
				sums[path.String()] += r.PathLatency(c, path)
			}
		}
	}
	meanMs = make(map[string]float64, len(counts))
	for name, n := range counts {
		meanMs[name] = float64(sums[name]) / float64(n) / float64(time.Millisecond)
	}
	return counts, meanMs
}

func clientSummary(c ClientRecorder) ClientSummary {
	return ClientSummary{
		Name:       c.Name,
		Ops:        c.Recorder.Ops(),
		Failed:     c.Recorder.Failed(),
		Throughput: c.Recorder.Throughput(),
		Classes:    classSummaries(c.Recorder),
	}
}

func cpuMicrosPerOp(cpu []CPUUsage, ops int64) float64 {
	if ops == 0 {
		return 0
	}
	total := 0.0
	for _, u := range cpu {
		total += u.Seconds
	}
	return total / float64(ops) * 1e6
}

// derivedNotes flags what a reader of the numbers should know.
func derivedNotes(r *Recorder) []string {
	var notes []string
	if _, ok := r.FastPathRatio(); !ok {
		notes = append(notes, "no strong operation took the fast or slow path: fast-path ratio undefined")
	}
	if n := r.Failed(); n > 0 {
		notes = append(notes, fmt.Sprintf("%d operations failed (timed out or errored) and are not in the latencies", n))
	}
	if r.clamped > 0 {
		notes = append(notes, fmt.Sprintf("%d latencies above %v were recorded as %v", r.clamped, maxRecorded, maxRecorded))
	}
	return notes
}
