// Package client is the Go client of hybridkv.
//
// A Client is one client process's connection to a cluster; it serves any
// number of Sessions. A Session is one logical client: its operations carry
// (session, sequence number) identities, may be pipelined, and are retried
// with the same identity until answered, so each takes effect once. Every
// operation chooses its consistency: Strong (linearizable) or Weak (causal).
//
//	c, err := client.New(client.Config{Protocol: "curp", Replicas: replicas})
//	defer c.Close()
//	s := c.NewSession()
//	err = s.Put(ctx, 42, []byte("hello"), client.Strong)
//	v, found, err := s.Get(ctx, 42, client.Weak)
//
// Protocols without a weak path (CURP, Raft) serve Weak operations as Strong
// ones; Client.WeakAsStrong reports it.
package client
