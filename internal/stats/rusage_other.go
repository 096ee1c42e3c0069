//go:build !unix

package stats

import "time"

// SelfCPU is not measured on this platform and returns 0.
func SelfCPU() time.Duration { return 0 }

// ChildrenCPU is not measured on this platform and returns 0.
func ChildrenCPU() time.Duration { return 0 }
