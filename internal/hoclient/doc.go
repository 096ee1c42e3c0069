// Package hoclient is CURP-HO's client core (package curpho describes the
// protocol and holds the replicas' side): CURP's client (package
// curpclient) for strong operations; weak writes are broadcast and
// complete on the bound replica's acknowledgement, weak reads go to the
// bound replica, and a strong operation's fast path also needs the
// session's uncommitted weak writes at every superquorum member.
package hoclient
