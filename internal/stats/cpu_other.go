//go:build !linux

package stats

import (
	"errors"
	"time"
)

// ProcessCPU needs /proc, which only Linux provides in the expected form.
func ProcessCPU(pid int) (time.Duration, error) {
	return 0, errors.New("stats: reading another process's cpu time is only supported on linux")
}
