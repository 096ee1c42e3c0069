//go:build !linux

package probe

import (
	"errors"
	"time"
)

var errUnsupported = errors.New("the machine probe needs Linux's per-thread CPU clock")

func threadCPU() (time.Duration, error) { return 0, errUnsupported }

func lowerThreadPriority() error { return errUnsupported }
