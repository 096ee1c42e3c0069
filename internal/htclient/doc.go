// Package htclient is CURP-HT's client side (package curpht describes the
// protocol and holds the replicas' side): weak writes go to the leader,
// weak reads to the closest replica with the session's floor.
package htclient
