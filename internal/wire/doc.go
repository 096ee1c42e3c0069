// Package wire defines every message hybridkv sends between processes and
// their compact binary encoding.
//
// The encoding is hand-written on top of encoding/binary: unsigned varints for
// integers, a length prefix for byte strings, one type byte per message. A
// frame on a connection is a 4-byte little-endian payload length followed by
// the payload.
// Encoding appends to a caller-owned buffer and allocates nothing; decoding
// validates every length against the bytes present and returns an error on
// malformed input instead of panicking.
//
// Raft's own messages travel inside a [Raft] message, encoded field by field
// by this package rather than by protobuf reflection (see raft.go).
package wire
