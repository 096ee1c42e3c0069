// Package curpclient is the client core of CURP and of the hybrid protocols
// built on it (package curp describes the protocol; the replicas' side is
// there). A client sends each strong operation to every replica and
// completes it after one round trip when the leader's speculative ok and
// the witnesses' oks reach a superquorum, else on the leader's sync reply.
// A hybrid protocol plugs its weak path in as an Extension (packages
// htclient and hoclient); without one, weak operations take the strong
// path.
package curpclient
