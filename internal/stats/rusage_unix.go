//go:build unix

package stats

import (
	"syscall"
	"time"
)

// SelfCPU returns the user plus system CPU time this process has used.
func SelfCPU() time.Duration { return rusageCPU(syscall.RUSAGE_SELF) }

// ChildrenCPU returns the user plus system CPU time of this process's
// children that have exited and been waited for; live children do not
// count, so stop and wait for replicas before reading it.
func ChildrenCPU() time.Duration { return rusageCPU(syscall.RUSAGE_CHILDREN) }

// rusageCPU returns 0 if getrusage fails, which it does not for these two
// arguments.
func rusageCPU(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
