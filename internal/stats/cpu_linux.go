package stats

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTicks is the unit of the CPU times in /proc/<pid>/stat: USER_HZ,
// which sysconf(_SC_CLK_TCK) reports and which Linux fixes at 100 on every
// architecture Go supports, whatever the kernel's internal HZ. Reading it
// through sysconf would need cgo for a constant.
const clockTicks = 100

// ProcessCPU returns the user plus system CPU time a live process has used,
// read from /proc/<pid>/stat, with a resolution of 10 ms.
func ProcessCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("stats: cpu of process %d: %w", pid, err)
	}
	ticks, err := parseStatTicks(data)
	if err != nil {
		return 0, fmt.Errorf("stats: cpu of process %d: %w", pid, err)
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// parseStatTicks returns utime + stime from the contents of a
// /proc/<pid>/stat file. The command name (field 2) is in parentheses and
// may itself contain spaces and parentheses, so fields are counted from the
// last ')'; utime and stime are fields 14 and 15.
func parseStatTicks(stat []byte) (uint64, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed stat line")
	}
	// fields[0] is field 3, the process state.
	fields := bytes.Fields(stat[end+1:])
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("stat line has %d fields after the command, want more than %d", len(fields), stime)
	}
	var total uint64
	for _, i := range []int{utime, stime} {
		n, err := strconv.ParseUint(string(fields[i]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat field %d: %w", i+3, err)
		}
		total += n
	}
	return total, nil
}
