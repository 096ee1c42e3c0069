package cluster_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/stats"
)

// BenchmarkCURPPipelined measures whole-system cost per operation: three
// replicas and three clients in this process, no emulated delay, 8 sessions
// per client with 4 operations in flight each. cpu-µs/op counts every
// goroutine of the process.
func BenchmarkCURPPipelined(b *testing.B) {
	cfg, _ := startCluster(b, 3, 0)
	var sessions []*client.Session
	for _, site := range cfg.Sites {
		c := newClient(b, cfg, site)
		for range 8 {
			sessions = append(sessions, c.NewSession())
		}
	}
	value := make([]byte, 100)
	const window = 4
	run := func(total int) {
		var wg sync.WaitGroup
		per := (total + len(sessions) - 1) / len(sessions)
		for i, s := range sessions {
			wg.Add(1)
			var mu sync.Mutex
			issued, done := 0, 0
			var next func()
			next = func() {
				kind := client.Get
				if issued%10 == 0 {
					kind = client.Put
				}
				issued++
				s.Submit(kind, strconv.Itoa(i*1000+issued%1000), value, client.Strong, func(r client.Result) {
					if r.Err != nil {
						b.Error(r.Err)
					}
					mu.Lock()
					defer mu.Unlock()
					done++
					if issued < per {
						next()
					}
					if done == per {
						wg.Done()
					}
				})
			}
			mu.Lock()
			for range window {
				next()
			}
			mu.Unlock()
		}
		wg.Wait()
	}
	run(2000) // warm up: leader elected, connections up
	cpu0, t0 := stats.SelfCPU(), time.Now()
	b.ResetTimer()
	run(b.N)
	b.StopTimer()
	elapsed, cpu := time.Since(t0), stats.SelfCPU()-cpu0
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}
