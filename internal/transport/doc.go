// Package transport carries hybridkv messages between processes over TCP.
//
// The protocols above it are chatty: every client operation turns into
// several small messages (requests, speculative and witness replies, raft
// appends), so a syscall or a goroutine per message would dominate the cost
// of the whole system. Each connection therefore has one writer goroutine
// that gathers everything sent since it last ran and hands it to the kernel
// in a single write, and one reader goroutine that decodes frames out of a
// large buffered reader. Send only encodes into a buffer and never waits for
// the network, so a protocol core's Ready loop is never stalled by a slow
// peer; when no connection exists the message is dropped, because every
// protocol already retries what it cares about.
//
// The system is meant to be evaluated as if its replicas sat in different
// regions while actually running on one machine or one LAN. So the
// transport can hold each outgoing frame back by a per-site-pair one-way
// delay with jitter, applied on the sending side only, so that a round trip
// costs the sum of both directions just as it would across a WAN. Delayed
// frames still leave in the order they were sent: the protocols rely on
// per-connection FIFO delivery, which TCP gives and jitter must not take
// away.
//
// Replicas dial every peer listed in their configuration as soon as the
// transport starts, and keep redialing with backoff; clients dial replicas
// the same way and are answered on the connection they opened, identified by
// the Hello frame that starts every connection.
package transport
