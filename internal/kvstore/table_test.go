package kvstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeysThatHashAlikeStayApart: keys in one hash chain are told apart
// by their bytes, also when their first 16 bytes and their lengths agree.
func TestKeysThatHashAlikeStayApart(t *testing.T) {
	tb := newKeyTable()
	const h = 42
	keys := []string{"a shared prefix longer than 16 bytes 001", "a shared prefix longer than 16 bytes 002",
		"short", "short\x00", "sixteen byte key", "sixteen byte kez"}
	ids := make(map[string]uint32)
	for _, k := range keys {
		_, id := tb.findHashed(h, k)
		require.Zero(t, id, "%q found before it was inserted", k)
		ids[k] = tb.insert(h, k)
	}
	for _, k := range keys {
		_, id := tb.findHashed(h, k)
		require.Equal(t, ids[k], id, "%q", k)
	}
}
