package bench

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hybridkv/hybridkv/internal/probe"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// scrapeInterval is how often the replicas' metrics are read during a run.
const scrapeInterval = time.Second

// scrapeTimeout bounds one replica's scrape, so a stuck replica costs a
// round no more than this.
const scrapeTimeout = 800 * time.Millisecond

// target is a replica's debug address.
type target struct {
	ID   uint64
	Addr string
}

// round is one scrape of every replica: values by replica ID, then by
// series name (labels included, as the exposition format writes them).
type round struct {
	Seconds float64
	Values  map[uint64]map[string]float64
	// ClientRSS is this process's resident set in bytes; 0 where it
	// cannot be read.
	ClientRSS float64
	// Errors counts the replicas whose scrape failed.
	Errors int
}

// scraper reads every replica's /metrics once per interval until stopped
// and keeps what it read.
type scraper struct {
	start   time.Time
	targets func() []target
	client  *http.Client
	cancel  context.CancelFunc
	done    chan struct{}

	mu     sync.Mutex
	rounds []round
}

// startScraper scrapes targets() (asked again each round: a restarted
// replica has a new address) every interval, timing rounds from start.
func startScraper(start time.Time, interval time.Duration, targets func() []target) *scraper {
	ctx, cancel := context.WithCancel(context.Background())
	s := &scraper{start: start, targets: targets, client: &http.Client{Timeout: scrapeTimeout},
		cancel: cancel, done: make(chan struct{})}
	go s.loop(ctx, interval)
	return s
}

func (s *scraper) loop(ctx context.Context, interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.scrapeAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stop ends the scraping and returns the rounds, in time order; a nil
// scraper has none.
func (s *scraper) stop() []round {
	if s == nil {
		return nil
	}
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rounds
}

// scrapeAll reads every replica at once. A follower's apply lag compares
// its applied index with the leader's commit index from another scrape:
// read one after the other, the later scrape also holds what committed in
// between (thousands of entries a second under load), and a follower read
// after the leader showed none at all.
func (s *scraper) scrapeAll(ctx context.Context) {
	rd := round{Seconds: time.Since(s.start).Seconds(), Values: make(map[uint64]map[string]float64), ClientRSS: ownRSS()}
	targets := s.targets()
	vals := make([]map[string]float64, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, tg := range targets {
		wg.Go(func() { vals[i], errs[i] = s.scrape(ctx, tg.Addr) })
	}
	wg.Wait()
	for i, tg := range targets {
		if errs[i] != nil {
			if ctx.Err() != nil {
				return // stopped mid-round: the round is incomplete
			}
			rd.Errors++
			continue
		}
		rd.Values[tg.ID] = vals[i]
	}
	s.mu.Lock()
	s.rounds = append(s.rounds, rd)
	s.mu.Unlock()
}

// scrape reads one replica's metrics.
func (s *scraper) scrape(ctx context.Context, addr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s/metrics: %s", addr, resp.Status)
	}
	return parseMetrics(resp.Body)
}

// kept are the metrics kept besides the project's own (hybridkv_*): memory,
// CPU and the garbage collector, what a long run's slowdown would show in.
var kept = []string{
	"process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
	"go_goroutines", "go_memstats_heap_alloc_bytes", "go_memstats_heap_inuse_bytes",
	"go_memstats_heap_objects", "go_gc_duration_seconds",
	"go_cpu_classes_gc_total_cpu_seconds_total", "go_cpu_classes_user_cpu_seconds_total",
}

// parseMetrics flattens the text exposition format into series values: a
// gauge or counter under its name and labels, a histogram or summary as
// its _count and _sum (buckets and quantiles are left out of the series).
func parseMetrics(r io.Reader) (map[string]float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64)
	for name, f := range fams {
		if !strings.HasPrefix(name, "hybridkv_") && !slices.Contains(kept, name) {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := formatLabels(m.GetLabel())
			switch {
			case m.GetGauge() != nil:
				out[name+labels] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[name+labels] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[name+"_count"+labels] = float64(m.GetHistogram().GetSampleCount())
				out[name+"_sum"+labels] = m.GetHistogram().GetSampleSum()
			case m.GetSummary() != nil:
				out[name+"_count"+labels] = float64(m.GetSummary().GetSampleCount())
				out[name+"_sum"+labels] = m.GetSummary().GetSampleSum()
			case m.GetUntyped() != nil:
				out[name+labels] = m.GetUntyped().GetValue()
			}
		}
	}
	return out, nil
}

// formatLabels writes labels as the exposition format does: {a="1",b="2"},
// in name order; empty without labels.
func formatLabels(ls []*dto.LabelPair) string {
	if len(ls) == 0 {
		return ""
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.GetName() + "=" + strconv.Quote(l.GetValue())
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// writeSeriesCSV writes every scraped value, one per row: seconds since
// the run's start, replica ID, series and value, in time, replica and
// series order; then the machine probe's samples, if it ran, under
// "probe": its nanoseconds of CPU time per load and per arithmetic step
// over each sample, and the loads the sample counts.
func writeSeriesCSV(w io.Writer, rounds []round, machine []probe.Sample) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"seconds", "replica", "metric", "value"}); err != nil {
		return err
	}
	for _, rd := range rounds {
		t := strconv.FormatFloat(rd.Seconds, 'f', 3, 64)
		for _, id := range slices.Sorted(maps.Keys(rd.Values)) {
			vals := rd.Values[id]
			rid := strconv.FormatUint(id, 10)
			for _, name := range slices.Sorted(maps.Keys(vals)) {
				v := strconv.FormatFloat(vals[name], 'g', -1, 64)
				if err := cw.Write([]string{t, rid, name, v}); err != nil {
					return err
				}
			}
		}
	}
	for _, m := range machine {
		t := strconv.FormatFloat(m.Seconds, 'f', 3, 64)
		load, step := probe.Speeds([]probe.Sample{m})
		for _, row := range [][2]string{
			{"probe_load_ns", strconv.FormatFloat(load, 'f', 2, 64)},
			{"probe_step_ns", strconv.FormatFloat(step, 'f', 4, 64)},
			{"probe_loads", strconv.FormatInt(m.Loads, 10)},
		} {
			if err := cw.Write([]string{t, "probe", row[0], row[1]}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// startScraping scrapes the spawned replicas for the whole run; nil (a
// scraper that does nothing) for an external cluster.
func (r *run) startScraping() *scraper {
	if r.procs == nil {
		return nil
	}
	return startScraper(r.start, scrapeInterval, func() []target {
		var ts []target
		for _, p := range r.procs.List() {
			if p.Running() {
				ts = append(ts, target{ID: p.ID, Addr: p.DebugAddr})
			}
		}
		return ts
	})
}

// overTime stops the scraping, adds the over-time section to the report
// and writes the scraped series if asked.
func (r *run) overTime(s *scraper, report *stats.Report, machine []probe.Sample) error {
	if s == nil {
		report.Notes = append(report.Notes, "replica metrics were not scraped: an external cluster's debug addresses are unknown")
		if load, step := probe.Speeds(machine); load > 0 {
			report.Notes = append(report.Notes, fmt.Sprintf(
				"machine probe over the run: %.1f ns per dependent load from memory, %.3f ns per arithmetic step", load, step))
		}
		return nil
	}
	rounds := s.stop()
	report.OverTime = summarizeOverTime(rounds, report.PerSecond, machine)
	if r.opts.MetricsCSV == "" {
		return nil
	}
	f, err := os.Create(r.opts.MetricsCSV)
	if err != nil {
		return err
	}
	if err := writeSeriesCSV(f, rounds, machine); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
