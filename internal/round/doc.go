// Package round holds what the loops that drive cores share about a
// round: the inbox that collects a core's messages from its connections
// and hands them over a round at a time, replicas' before clients'.
package round
