// Package bench runs the benchmark workload against a cluster: it starts the
// replicas as child processes (or uses a running cluster), runs client
// sessions at every client site in closed loops with a pipeline window,
// records latencies per class in HDR histograms over a measured window, and
// builds the report that `hybridkv bench` prints and writes.
//
// While the load runs it scrapes every spawned replica's /metrics once a
// second; the series go to a CSV beside the report, and the report gains an
// over-time section (throughput, follower apply lag, memory, leader
// changes per interval), so a run that degrades shows how and where.
//
// A run can also be made to suffer faults: a single crash of chosen
// replicas (Crash), or a nemesis (Nemesis) that kills, pauses, partitions,
// slows and restarts the replica processes on a schedule drawn from a
// seed, measuring per fault how long strong operations were unavailable at
// each client site and plotting throughput over time around the faults.
package bench
