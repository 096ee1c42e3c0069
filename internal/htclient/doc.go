// Package htclient is CURP-HT's client core (package curpht describes the
// protocol and holds the replicas' side): CURP's client (package
// curpclient) for strong operations; weak writes go to the leader, weak
// reads to the closest replica with the session's floor.
package htclient
