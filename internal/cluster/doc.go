// Package cluster turns a configuration into running replicas and clients:
// one replica per process (Spawn, as `hybridkv cluster` and `bench` do), all
// replicas inside one process (StartLocal, for tests), and the matching
// client configuration for any site.
package cluster
