package workload

import (
	"slices"
	"strings"
)

// ycsbMix is the share of each kind of operation in one of YCSB's core
// workloads (its workloads/workloadX files), as probabilities.
type ycsbMix struct {
	read, update, insert, readModifyWrite float64
	// latest draws reads from the most recently inserted keys (YCSB's
	// "latest" request distribution) instead of the Zipfian over the key
	// space.
	latest bool
}

// ycsbMixes are the core workloads the generator draws. E (short scans) is
// not among them: a weak scan is not a path any protocol has yet.
var ycsbMixes = map[string]ycsbMix{
	"a": {read: 0.5, update: 0.5},                 // update heavy
	"b": {read: 0.95, update: 0.05},               // read mostly
	"c": {read: 1},                                // read only
	"d": {read: 0.95, insert: 0.05, latest: true}, // read latest, with inserts
	"f": {read: 0.5, readModifyWrite: 0.5},        // read-modify-write
}

// YCSBWorkloads lists the YCSB core workloads the generator draws.
func YCSBWorkloads() []string {
	var names []string
	for n := range ycsbMixes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// YCSBHelp describes the workloads for a flag's help.
func YCSBHelp() string {
	return "YCSB core workload: " + strings.Join(YCSBWorkloads(), ", ") +
		" (A 50/50 read/update, B 95/5, C read only, D read latest with 5 % inserts, F 50 % read-modify-write)"
}
