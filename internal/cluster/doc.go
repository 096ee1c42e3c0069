// Package cluster turns a configuration into running replicas and clients:
// one replica per process (Spawn, as `hybridkv cluster` and `bench` do), all
// replicas inside one process (StartLocal, for tests), and the matching
// client configuration for any site.
//
// A replica's debug address serves /status, Prometheus metrics at /metrics
// and profiles (DebugHandler). Metrics are read when scraped: the protocol
// core's are copied out by the replica's own loop between two rounds of
// work (node.Node.Metrics), the transport's and the disk's from
// counters they keep anyway, so monitoring adds nothing to the hot paths.
package cluster
