package bench

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hybridkv/hybridkv/internal/stats"
)

// timelineBucket is the resolution of the throughput-over-time figure:
// fine enough to show an election, coarse enough to be more than noise.
const timelineBucket = 100 * time.Millisecond

// faultLog records a nemesis run: every fault and heal with its offset,
// the first strong operation after each fault per client site, the
// operations that failed, and throughput over time. Completions report to
// it from every client's event loop.
type faultLog struct {
	start time.Time
	out   io.Writer // the fault and heal lines as they happen; may be nil

	mu     sync.Mutex
	faults []stats.Fault
	// injected is each fault's injection time, parallel to faults.
	injected []time.Time
	// waiting lists, per client site, the faults after which the site has
	// not yet completed a strong operation.
	waiting map[string][]int
	// early counts failed operations invoked before the first fault.
	early    int64
	timeline [][]int64 // [class][bucket]
	lines    []string
	errs     []string
}

func newFaultLog(start time.Time, out io.Writer) *faultLog {
	return &faultLog{start: start, out: out, waiting: make(map[string][]int),
		timeline: make([][]int64, len(stats.Classes()))}
}

// logf records a line with its offset from the start of the run.
func (l *faultLog) logf(format string, args ...any) {
	line := fmt.Sprintf("%+8.3fs  ", time.Since(l.start).Seconds()) + fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	if l.out != nil {
		fmt.Fprintln(l.out, "  nemesis "+line)
	}
}

// fail records a nemesis action that did not work, which makes the run fail.
func (l *faultLog) fail(err error) {
	l.logf("ERROR %v", err)
	l.mu.Lock()
	l.errs = append(l.errs, err.Error())
	l.mu.Unlock()
}

// injected notes a fault in force from at; sites are the client sites
// whose recovery is measured.
func (l *faultLog) inject(kind, what string, at time.Time, sites []string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := len(l.faults)
	l.faults = append(l.faults, stats.Fault{Kind: kind, What: what, AtS: at.Sub(l.start).Seconds(),
		UnavailableMs: make(map[string]float64)})
	l.injected = append(l.injected, at)
	for _, s := range sites {
		l.waiting[s] = append(l.waiting[s], i)
	}
	return i
}

func (l *faultLog) healed(i int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults[i].HealedS = at.Sub(l.start).Seconds()
}

// completed notes an operation of class c at site, invoked at invoked and
// ended at done; ok is false if it failed.
func (l *faultLog) completed(site string, c stats.Class, invoked, done time.Time, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ok {
		l.failedLocked(invoked)
		return
	}
	if b := int(done.Sub(l.start) / timelineBucket); b >= 0 {
		tl := l.timeline[c]
		if b >= len(tl) {
			tl = append(tl, make([]int64, b+1-len(tl))...)
		}
		tl[b]++
		l.timeline[c] = tl
	}
	if !c.IsStrong() {
		return
	}
	w := l.waiting[site]
	kept := w[:0]
	for _, i := range w {
		if invoked.Before(l.injected[i]) {
			kept = append(kept, i)
			continue
		}
		l.faults[i].UnavailableMs[site] = float64(done.Sub(l.injected[i]).Microseconds()) / 1e3
	}
	l.waiting[site] = kept
}

// failedLocked charges a failed operation to the latest fault injected
// before it was invoked.
func (l *faultLog) failedLocked(invoked time.Time) {
	for i := len(l.injected) - 1; i >= 0; i-- {
		if !invoked.Before(l.injected[i]) {
			l.faults[i].Failed++
			return
		}
	}
	l.early++
}

// fill puts the record into the report.
func (l *faultLog) fill(rep *stats.Report, sites []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rep.Faults = append([]stats.Fault(nil), l.faults...)
	end := time.Since(l.start).Seconds()
	for i := range rep.Faults {
		if rep.Faults[i].HealedS < rep.Faults[i].AtS {
			rep.Faults[i].HealedS = end // never healed: in force to the end
		}
	}
	rep.FaultSites = sites
	tl := &stats.Timeline{BucketMs: int(timelineBucket / time.Millisecond), Ops: make(map[string][]int64)}
	for c, counts := range l.timeline {
		if len(counts) > 0 {
			tl.Ops[stats.Classes()[c].String()] = append([]int64(nil), counts...)
		}
	}
	rep.Timeline = tl
	rep.Notes = append(rep.Notes, "fault log:")
	for _, line := range l.lines {
		rep.Notes = append(rep.Notes, "  "+line)
	}
	if l.early > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d operations failed before the first fault", l.early))
	}
}

// errors returns the nemesis actions that failed.
func (l *faultLog) errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errs...)
}
