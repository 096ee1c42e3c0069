package history

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/maphash"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Decode parses a whole history file. Any malformed input — bad magic,
// truncation, an out-of-range field, a checksum mismatch, bytes after the
// end record — is an error wrapping ErrCorrupt.
func Decode(data []byte) (*File, error) {
	return decode(bufio.NewReader(bytes.NewReader(data)), int64(len(data)))
}

// Read decodes a history from r, reading it to the end.
func Read(r io.Reader) (*File, error) {
	return decode(bufio.NewReaderSize(r, readBuffer), 0)
}

// ReadFile decodes the history file at path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	return decode(bufio.NewReaderSize(f, readBuffer), size)
}

// readBuffer is how much of a history file is read at a time.
const readBuffer = 1 << 20

// decode reads a history of size bytes (0: not known) record by record.
// Nothing aliases what it read: each value is interned, so the reads that
// returned one value share one copy. Ten checked minutes recorded 47
// million operations, a 7.2 GB file; held whole while its events pointed
// into it, the check ran out of the machine's 24 GiB. For the same
// reason the events are allocated once, from the size and the first
// events' records, rather than grown (each growth held two copies).
func decode(br *bufio.Reader, size int64) (*File, error) {
	in := &hashingReader{r: br, crc: crc32.New(castagnoli)}
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(in, magic); err != nil {
		return nil, in.or(corrupt("missing %q header", Magic))
	}
	var version int
	switch string(magic) {
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
	values := newInterner()
	var buf bytes.Buffer
	for records := uint64(0); ; records++ {
		sum := in.crc.Sum32() // the end record checks what came before it
		tag, err := in.ReadByte()
		if err != nil {
			return nil, in.or(corrupt("truncated: no end record after %d records", records))
		}
		plen, err := binary.ReadUvarint(in)
		if err != nil {
			return nil, in.or(corrupt("record %d: bad length", records))
		}
		// Copied as it arrives, so that a corrupt length allocates no
		// more than the file holds.
		buf.Reset()
		if n, _ := io.CopyN(&buf, in, int64(min(plen, math.MaxInt64))); uint64(n) != plen {
			return nil, in.or(corrupt("record %d: truncated payload", records))
		}
		payload := buf.Bytes()
		switch tag {
		case tagEvent:
			var e Event
			if e, err = decodeEvent(payload, version); err == nil {
				e.Value, e.Result = values.intern(e.Value), bytes.Clone(e.Result)
				if len(f.Events) == sampleEvents && size > 0 {
					f.Events = slices.Grow(f.Events, expectedEvents(size, in.read, sampleEvents))
				}
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
			if err := checkEnd(payload, records, sum); err != nil {
				return nil, err
			}
			if _, err := br.ReadByte(); err != io.EOF {
				return nil, corrupt("bytes after the end record")
			}
			return f, nil
		default:
			return nil, corrupt("record %d: unknown tag %#x", records, tag)
		}
		if err != nil {
			return nil, corrupt("record %d: %v", records, err)
		}
	}
}

// sampleEvents is how many events decode reads before it sizes the rest.
const sampleEvents = 4096

// expectedEvents is how many more events a file of size bytes is expected
// to hold after the first n, which took read bytes: a tenth more than
// their mean record size says, so that a later stretch of larger records
// still fits.
func expectedEvents(size, read int64, n int) int {
	if read <= 0 || size <= read {
		return 0
	}
	return int(float64(size-read) / (float64(read) / float64(n)) * 1.1)
}

// hashingReader feeds what is read through it to a checksum, and counts
// it.
type hashingReader struct {
	r    *bufio.Reader
	crc  hash.Hash32
	read int64
	err  error // the first failure to read other than the end
}

func (h *hashingReader) ReadByte() (byte, error) {
	b, err := h.r.ReadByte()
	if err == nil {
		h.crc.Write([]byte{b})
		h.read++
	}
	h.note(err)
	return b, err
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.crc.Write(p[:n])
	h.read += int64(n)
	h.note(err)
	return n, err
}

func (h *hashingReader) note(err error) {
	if err != nil && err != io.EOF && h.err == nil {
		h.err = err
	}
}

// or returns what failed to read, if anything did: a file that could not
// be read is not a corrupt one; else corrupt.
func (h *hashingReader) or(corrupt error) error {
	if h.err != nil {
		return h.err
	}
	return corrupt
}

// interner keeps one copy of each value.
type interner struct {
	seed   maphash.Seed
	copies map[uint64][]byte
}

func newInterner() *interner {
	return &interner{seed: maphash.MakeSeed(), copies: make(map[uint64][]byte)}
}

// intern returns the kept copy of v, keeping a copy of its own first if
// there is none: v may be overwritten after.
func (in *interner) intern(v []byte) []byte { return in.keep(v, true) }

// share returns the kept copy of v, keeping v itself first if there is
// none: its owner leaves it alone.
func (in *interner) share(v []byte) []byte { return in.keep(v, false) }

func (in *interner) keep(v []byte, clone bool) []byte {
	if len(v) == 0 {
		return v
	}
	h := maphash.Bytes(in.seed, v)
	c, ok := in.copies[h]
	if ok && bytes.Equal(c, v) {
		return c
	}
	if clone {
		v = bytes.Clone(v)
	}
	if !ok {
		in.copies[h] = v // not on a collision: the value first kept stays
	}
	return v
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
