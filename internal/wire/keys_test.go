package wire

import (
	"bytes"
	"strings"
	"testing"
)

// TestKeysRoundTrip: any byte string is a key, the empty one, NUL and
// 0xff bytes, invalid UTF-8 and a key of a megabyte included; each comes
// back exactly, alone (as the log stores it) and in a request, and owns
// its bytes.
func TestKeysRoundTrip(t *testing.T) {
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	keys := []string{"", "\x00", "\xff", "a", "user0000042", "\xc3\x28", string(every),
		strings.Repeat("k", 1<<20)}
	for _, key := range keys {
		for _, kind := range []OpKind{Get, Put, Delete} {
			op := Op{ID: OpID{Session: 9, Seq: 3}, Level: Weak, Kind: kind, Key: key}
			if kind == Put {
				op.Value = []byte("v")
			}
			enc := AppendOp(nil, &op)
			var got Op
			if err := DecodeOp(enc, &got); err != nil {
				t.Fatalf("DecodeOp(%v key of %d bytes): %v", kind, len(key), err)
			}
			for i := range enc {
				enc[i] ^= 0xff
			}
			if got.Key != key || got.Kind != kind || !bytes.Equal(got.Value, op.Value) {
				t.Fatalf("%v key of %d bytes came back as %v key of %d bytes", kind, len(key), got.Kind, len(got.Key))
			}
			m, err := Decode(Append(nil, &Request{Op: op}))
			if err != nil {
				t.Fatalf("Decode request with a key of %d bytes: %v", len(key), err)
			}
			if r := m.(*Request); r.Op.Key != key {
				t.Fatalf("request key of %d bytes came back as %d bytes", len(key), len(r.Op.Key))
			}
		}
	}
}

// TestKeyLengthIsBounded: a key length past the input is truncation, not
// an allocation of that size.
func TestKeyLengthIsBounded(t *testing.T) {
	b := AppendOp(nil, &Op{Key: "abc"})
	var op Op
	// ID (2 bytes), level, kind, then the key's length: claim 100 bytes.
	b[4] = 100
	if err := DecodeOp(b, &op); err == nil {
		t.Fatalf("DecodeOp accepted a key longer than its input: %q", op.Key)
	}
}

// TestDeleteIsAWrite: a delete conflicts with every operation on its key,
// as a put does, and with none on another; keys compare as bytes.
func TestDeleteIsAWrite(t *testing.T) {
	del := &Op{Kind: Delete, Key: "k"}
	for _, o := range []*Op{{Kind: Get, Key: "k"}, {Kind: Put, Key: "k"}, {Kind: Delete, Key: "k"}} {
		if !del.Conflicts(o) || !o.Conflicts(del) {
			t.Errorf("a delete and a %v on its key do not conflict", o.Kind)
		}
	}
	for _, key := range []string{"K", "k\x00", ""} {
		if del.Conflicts(&Op{Kind: Put, Key: key}) {
			t.Errorf("a delete of %q conflicts with a put of %q", "k", key)
		}
	}
	if (&Op{Kind: Get, Key: "k"}).Conflicts(&Op{Kind: Get, Key: "k"}) {
		t.Error("two gets conflict")
	}
	if !Delete.IsWrite() || Delete.String() != "delete" || !Delete.Valid() {
		t.Error("Delete is a valid write named delete")
	}
}
