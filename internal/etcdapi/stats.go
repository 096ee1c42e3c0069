package etcdapi

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/hybridkv/hybridkv/client"
)

// served counts the gateway's operations by request and path, with their
// latencies as the gateway saw them (from its submission to the cluster
// to the answer), so that what an etcd client got — one round trip or
// two — can be read off a running gateway.
type served struct {
	mu    sync.Mutex
	by    map[string]*pathStats // by request kind
	paths map[string]map[client.Path]int64
}

type pathStats struct {
	hist *hdrhistogram.Histogram // µs
}

func newServed() *served {
	return &served{by: map[string]*pathStats{}, paths: map[string]map[client.Path]int64{}}
}

func (s *served) record(kind string, res client.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.by[kind]
	if st == nil {
		st = &pathStats{hist: hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)}
		s.by[kind] = st
		s.paths[kind] = map[client.Path]int64{}
	}
	_ = st.hist.RecordValue(max(res.Latency.Microseconds(), 1))
	s.paths[kind][res.Path]++
}

// Summary reports, per kind of request served, how many completed, on
// which paths, and their latency percentiles.
func (s *served) Summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	kinds := make([]string, 0, len(s.by))
	for k := range s.by {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		h := s.by[k].hist
		fmt.Fprintf(&b, "%s: %d ops, p50 %.2f ms, p99 %.2f ms; paths", k, h.TotalCount(),
			ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(99)))
		paths := s.paths[k]
		order := make([]client.Path, 0, len(paths))
		for p := range paths {
			order = append(order, p)
		}
		slices.Sort(order)
		for _, p := range order {
			fmt.Fprintf(&b, " %v %d (%.1f%%)", p, paths[p], 100*float64(paths[p])/float64(h.TotalCount()))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func ms(us int64) float64 { return float64(us) / 1000 }
