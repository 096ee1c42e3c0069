package bench

import (
	"bytes"
	"os"
	"strconv"
)

// ownRSS is this process's resident set in bytes, from /proc/self/statm;
// 0 where that cannot be read.
func ownRSS() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := bytes.Fields(b)
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return 0
	}
	return float64(pages) * float64(os.Getpagesize())
}
