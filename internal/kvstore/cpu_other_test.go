//go:build !unix

package kvstore

import "time"

// cpuTime is 0 where the process's CPU time is not to be had.
func cpuTime() time.Duration { return 0 }
