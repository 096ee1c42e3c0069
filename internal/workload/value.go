package workload

import (
	"bytes"
	"encoding/binary"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// A value is the writing operation's session and sequence number, little
// endian, followed by filler whose byte at offset i is fillByte(i). The
// filler depends only on the offset, so DecodeValue can check it without
// knowing the configured size.
const idBytes = 16

func fillByte(i int) byte { return 'a' + byte(i%26) }

// newTemplate builds a value of size bytes with a zero identity.
func newTemplate(size int) []byte {
	t := make([]byte, size)
	for i := idBytes; i < size; i++ {
		t[i] = fillByte(i)
	}
	return t
}

// Value returns the value the put with identity id writes: ValueSize bytes,
// distinct for every operation. The slice is freshly allocated (a single
// allocation) because the store keeps it.
func (g *Generator) Value(id wire.OpID) []byte {
	v := bytes.Clone(g.template)
	binary.LittleEndian.PutUint64(v[0:8], id.Session)
	binary.LittleEndian.PutUint64(v[8:16], id.Seq)
	return v
}

// DecodeValue returns the identity of the operation that wrote v. It
// reports false when v was not produced by [Generator.Value]: too short, or
// with filler that does not match.
func DecodeValue(v []byte) (wire.OpID, bool) {
	if len(v) < idBytes {
		return wire.OpID{}, false
	}
	for i := idBytes; i < len(v); i++ {
		if v[i] != fillByte(i) {
			return wire.OpID{}, false
		}
	}
	return wire.OpID{
		Session: binary.LittleEndian.Uint64(v[0:8]),
		Seq:     binary.LittleEndian.Uint64(v[8:16]),
	}, true
}
