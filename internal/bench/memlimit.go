package bench

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// LimitMemoryForCheck gives the Go runtime a soft memory limit of three
// quarters of the machine's memory, unless GOMEMLIMIT sets one: a check
// holds a whole history, and by default the heap may grow to twice what
// is live between collections, so a long run's check was killed by the
// kernel with half its heap garbage (ten minutes at 95 % weak, 47 million
// operations, checked by hybridkv check without a limit: killed at 19 GB
// resident). Near the limit the collector runs more often instead.
func LimitMemoryForCheck() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	if total := physicalMemory(); total > 0 {
		debug.SetMemoryLimit(total / 4 * 3)
	}
}

// physicalMemory returns the machine's memory in bytes, or 0 where
// /proc/meminfo does not say.
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
