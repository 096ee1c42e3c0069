package workload

import (
	"maps"
	"slices"
	"strings"
)

// MixTAO names the TAO-like mix (Bronson et al., "TAO: Facebook's
// Distributed Data Store for the Social Graph", 2013, as the earlier
// evaluation of hybrid protocols used it): a read-dominated social graph
// in which 1 % of the operations are writes, all strong; 4 % are strong
// reads; and 95 % weak reads, 44 % of them range reads (an association
// list: scans of 1 to 1000 keys) and the rest single-key gets.
const MixTAO = "tao"

// levelMix is a mix that fixes each operation's level along with its
// kind, as shares (probabilities) of all operations: unlike the write
// shares or a YCSB workload, whose levels WeakRatio draws, the level is
// part of what the mix describes. The weak reads take what the other
// shares leave.
type levelMix struct {
	strongWrite, strongRead, weakScan float64
	// maxScan is the longest scan, in keys; lengths are uniform in
	// 1 .. maxScan.
	maxScan uint64
	// about describes the mix for a flag's help.
	about string
}

// levelMixes are the mixes Config.Mix names.
var levelMixes = map[string]levelMix{
	MixTAO: {strongWrite: 0.01, strongRead: 0.04, weakScan: 0.95 * 0.44, maxScan: 1000,
		about: "TAO's social graph: 1 % strong writes, 4 % strong reads, 95 % weak reads of which 44 % scan 1-1000 keys"},
}

// Mixes lists the mixes Config.Mix may name.
func Mixes() []string { return slices.Sorted(maps.Keys(levelMixes)) }

// MixHelp describes the mixes for a flag's help.
func MixHelp() string {
	var each []string
	for _, name := range Mixes() {
		each = append(each, name+" ("+levelMixes[name].about+")")
	}
	return "operation mix that fixes every operation's kind and level: " + strings.Join(each, ", ")
}
