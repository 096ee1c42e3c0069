// Package bench runs the benchmark workload against a cluster: it starts the
// replicas as child processes (or uses a running cluster), runs client
// sessions at every client site in closed loops with a pipeline window,
// records latencies per class in HDR histograms over a measured window, and
// builds the report that `hybridkv bench` prints and writes.
package bench
