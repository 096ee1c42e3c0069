package probe

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time.
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// lowerThreadPriority gives the calling thread the lowest priority: on
// Linux a nice value belongs to a thread, and 0 names the caller.
func lowerThreadPriority() error {
	return unix.Setpriority(unix.PRIO_PROCESS, 0, 19)
}
