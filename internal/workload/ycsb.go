package workload

import (
	"slices"
	"strings"
)

// ycsbMix is the share of each kind of operation in one of YCSB's core
// workloads (its workloads/workloadX files), as probabilities.
type ycsbMix struct {
	read, update, insert, readModifyWrite, scan float64
	// latest draws reads from the most recently inserted keys (YCSB's
	// "latest" request distribution) instead of the Zipfian over the key
	// space.
	latest bool
	// maxScan is the longest scan, in records; lengths are uniform in
	// 1 .. maxScan (YCSB's maxscanlength, scanlengthdistribution=uniform).
	maxScan uint64
}

// ycsbMixes are the core workloads the generator draws, all six.
var ycsbMixes = map[string]ycsbMix{
	"a": {read: 0.5, update: 0.5},                       // update heavy
	"b": {read: 0.95, update: 0.05},                     // read mostly
	"c": {read: 1},                                      // read only
	"d": {read: 0.95, insert: 0.05, latest: true},       // read latest, with inserts
	"e": {scan: 0.95, insert: 0.05, maxScan: ycsbScans}, // short ranges, with inserts
	"f": {read: 0.5, readModifyWrite: 0.5},              // read-modify-write
}

// ycsbScans is YCSB E's maxscanlength.
const ycsbScans = 100

// YCSBWorkloads lists the YCSB core workloads the generator draws.
func YCSBWorkloads() []string {
	var names []string
	for n := range ycsbMixes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// The kinds of YCSB operations, as YCSBWeak names them.
const (
	YCSBRead            = "read"
	YCSBUpdate          = "update"
	YCSBInsert          = "insert"
	YCSBReadModifyWrite = "rmw"
	YCSBScan            = "scan"
)

// YCSBKinds lists the kinds of YCSB operations.
func YCSBKinds() []string {
	return []string{YCSBRead, YCSBUpdate, YCSBInsert, YCSBReadModifyWrite, YCSBScan}
}

// weakKinds is the set of YCSB kinds that may be weak, one bit per kind
// in YCSBKinds' order.
type weakKinds uint8

func newWeakKinds(names []string) weakKinds {
	if len(names) == 0 {
		return 1<<len(YCSBKinds()) - 1
	}
	var k weakKinds
	for _, n := range names {
		if i := slices.Index(YCSBKinds(), n); i >= 0 {
			k |= 1 << i
		}
	}
	return k
}

func (k weakKinds) allows(kind string) bool { return k&(1<<slices.Index(YCSBKinds(), kind)) != 0 }

// YCSBHelp describes the workloads for a flag's help.
func YCSBHelp() string {
	return "YCSB core workload: " + strings.Join(YCSBWorkloads(), ", ") +
		" (A 50/50 read/update, B 95/5, C read only, D read latest with 5 % inserts, " +
		"E 95 % scans of 1-100 keys with 5 % inserts, F 50 % read-modify-write)"
}
