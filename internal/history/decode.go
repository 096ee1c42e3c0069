package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Decode parses a whole history file. Event values alias data. Any
// malformed input — bad magic, truncation, an out-of-range field, a
// checksum mismatch, bytes after the end record — is an error wrapping
// ErrCorrupt.
func Decode(data []byte) (*File, error) {
	if len(data) < len(Magic) {
		return nil, corrupt("missing %q header", Magic)
	}
	var version int
	switch string(data[:len(Magic)]) {
	case Magic:
		version = 3
	case magicV2:
		version = 2
	case magicV1:
		version = 1
	default:
		return nil, corrupt("missing %q header", Magic)
	}
	f := &File{}
	pos := len(Magic)
	var records uint64
	for {
		if pos >= len(data) {
			return nil, corrupt("truncated: no end record after %d records", records)
		}
		start := pos
		tag := data[pos]
		plen, n := binary.Uvarint(data[pos+1:])
		if n <= 0 {
			return nil, corrupt("record %d: bad length", records)
		}
		pos += 1 + n
		if plen > uint64(len(data)-pos) {
			return nil, corrupt("record %d: truncated payload", records)
		}
		payload := data[pos : pos+int(plen) : pos+int(plen)]
		pos += int(plen)
		var err error
		switch tag {
		case tagEvent:
			var e Event
			if e, err = decodeEvent(payload, version); err == nil {
				f.Events = append(f.Events, e)
			}
		case tagReplica:
			var r ReplicaState
			if r, err = decodeReplica(payload); err == nil {
				f.Replicas = append(f.Replicas, r)
			}
		case tagFault:
			f.Faults = append(f.Faults, string(payload))
		case tagEnd:
			if err := checkEnd(payload, records, crc32.Checksum(data[:start], castagnoli)); err != nil {
				return nil, err
			}
			if pos != len(data) {
				return nil, corrupt("%d bytes after the end record", len(data)-pos)
			}
			return f, nil
		default:
			return nil, corrupt("record %d: unknown tag %#x", records, tag)
		}
		if err != nil {
			return nil, corrupt("record %d: %v", records, err)
		}
		records++
	}
}

func checkEnd(p []byte, records uint64, sum uint32) error {
	n, k := binary.Uvarint(p)
	if k <= 0 || len(p) != k+4 {
		return corrupt("malformed end record")
	}
	if n != records {
		return corrupt("end record counts %d records, found %d", n, records)
	}
	if got := binary.LittleEndian.Uint32(p[k:]); got != sum {
		return corrupt("checksum %#x, computed %#x", got, sum)
	}
	return nil
}

// reader consumes a payload; the first failure sticks.
type reader struct {
	p   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.bad = true
		r.p = nil
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.p)
	if n <= 0 {
		r.bad = true
		r.p = nil
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if n > uint64(len(r.p)) {
		r.bad = true
		r.p = nil
		return nil
	}
	b := r.p[:n:n]
	r.p = r.p[n:]
	return b
}

// done reports whether the payload parsed and was consumed exactly, so a
// record cannot hide extra bytes.
func (r *reader) done() bool { return !r.bad && len(r.p) == 0 }

// decodeEvent decodes an event of the given format version: version 1's
// key is an integer, and only version 3 has transactions and results.
func decodeEvent(p []byte, version int) (Event, error) {
	r := reader{p: p}
	var e Event
	e.Session = r.uvarint()
	e.Seq = r.uvarint()
	hdr := r.bytes(4)
	if r.bad {
		return e, errMalformed
	}
	e.Level, e.Kind, e.Outcome = wire.Level(hdr[0]), wire.OpKind(hdr[1]), Outcome(hdr[2])
	if hdr[3]&^flagFound != 0 {
		return e, errMalformed
	}
	if version < 3 && e.Kind == wire.Txn {
		return e, fmt.Errorf("event %v: a transaction in a version %d history", e.ID(), version)
	}
	e.Found = hdr[3]&flagFound != 0
	if version == 1 {
		e.Key = strconv.FormatUint(r.uvarint(), 10)
	} else {
		e.Key = string(r.bytes(r.uvarint()))
	}
	e.Invoke = r.varint()
	e.Return = r.varint()
	e.Slot = r.uvarint()
	e.Value = r.bytes(r.uvarint())
	if version >= 3 {
		e.Result = r.bytes(r.uvarint())
	}
	if !r.done() {
		return e, errMalformed
	}
	if len(e.Value) == 0 {
		e.Value = nil // a round trip must not turn nil into empty
	}
	if len(e.Result) == 0 {
		e.Result = nil
	}
	return e, e.Valid()
}

func decodeReplica(p []byte) (ReplicaState, error) {
	r := reader{p: p}
	s := ReplicaState{ID: r.uvarint(), Applied: r.uvarint(), Digest: r.uvarint()}
	if !r.done() {
		return s, errMalformed
	}
	return s, nil
}

var errMalformed = errors.New("malformed payload")

// Read decodes a history from r, reading it to the end.
func Read(r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// ReadFile decodes the history file at path.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// WriteFile writes f to path, replacing any existing file.
func WriteFile(path string, f *File) (err error) {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	return Encode(out, f)
}
