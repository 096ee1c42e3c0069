// Package etcdapi serves etcd's v3 API over a hybridkv cluster, so that
// etcdctl, etcd's Go client and tools built on them (YCSB's etcd binding)
// can use hybridkv unchanged.
//
// It is a gateway: a client of the cluster through the client package,
// which runs the protocol's client side. A strong single-key request
// therefore takes the protocol's fast path (one round trip under CURP and
// its hybrids), and a serializable read the weak path to the closest
// replica, without the replicas knowing gRPC. Run one gateway next to each
// site's replica.
//
// What it maps:
//   - KV.Range of one key: linearizable is a STRONG read, serializable a
//     WEAK one. KV.Put and KV.DeleteRange of one key are STRONG, or WEAK
//     when the request's metadata carries "hybridkv-consistency: weak".
//   - Sessions: each gRPC connection is one hybridkv session; requests that
//     carry "hybridkv-session: NAME" share the session NAME across the
//     connections to this gateway.
//   - Revisions are log positions (slots): monotonic but not contiguous,
//     as the log also holds entries that are not writes.
//   - Maintenance.Status and Cluster.MemberList answer what etcdctl's
//     endpoint status and member list print.
//
// Everything else answers Unimplemented, saying what is not supported.
package etcdapi
