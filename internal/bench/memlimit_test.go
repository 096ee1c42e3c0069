package bench

import (
	"runtime"
	"testing"
)

func TestPhysicalMemoryReadsMeminfo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/meminfo")
	}
	if got := physicalMemory(); got < 1<<26 {
		t.Fatalf("physicalMemory() = %d bytes, want the machine's memory", got)
	}
}
