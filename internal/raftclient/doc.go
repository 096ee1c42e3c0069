// Package raftclient is the Raft baseline's client core (package raftkv
// holds the replicas' side): every operation goes to the leader and
// completes once committed and applied; weak operations are served as
// strong ones.
package raftclient
