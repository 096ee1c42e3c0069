package history

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// Magic opens every history file; the digit is the format version. Version
// 2 has byte-string keys (a length and the bytes) where version 1 had an
// integer (a uvarint), and deletes; version 3 ends each event with its
// Result (a length and the bytes), a transaction's answer. Decode reads
// all three.
const Magic = "HKVH3"

// magicV2 and magicV1 open histories of the earlier versions: neither has
// transactions, and version 1's integer keys read back as their decimal
// form.
const (
	magicV2 = "HKVH2"
	magicV1 = "HKVH1"
)

// Record tags. The end record makes truncation detectable: a file cut at a
// record boundary would otherwise parse as a shorter, valid history.
const (
	tagEvent   byte = 'E'
	tagReplica byte = 'R'
	tagFault   byte = 'F'
	tagEnd     byte = 'Z'
)

const flagFound = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer streams a history to an io.Writer, so a long run need not hold
// every event in memory before saving. Records may come in any order;
// Close writes the end record. Errors are sticky.
type Writer struct {
	w     *bufio.Writer
	crc   hash.Hash32
	n     uint64 // records written, end record excluded
	buf   []byte
	err   error
	ended bool
}

// NewWriter writes the magic header and returns a writer.
func NewWriter(w io.Writer) (*Writer, error) {
	hw := &Writer{w: bufio.NewWriter(w), crc: crc32.New(castagnoli)}
	hw.write([]byte(Magic))
	return hw, hw.err
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	w.crc.Write(b)
	_, w.err = w.w.Write(b)
}

// record writes a tag, the payload's length and the payload.
func (w *Writer) record(tag byte, payload []byte) error {
	if w.ended {
		return errors.New("history: write after Close")
	}
	var hdr [1 + binary.MaxVarintLen64]byte
	hdr[0] = tag
	n := 1 + binary.PutUvarint(hdr[1:], uint64(len(payload)))
	w.write(hdr[:n])
	w.write(payload)
	w.n++
	return w.err
}

// Event appends an event.
func (w *Writer) Event(e *Event) error {
	if err := e.Valid(); err != nil {
		return err
	}
	w.buf = appendEvent(w.buf[:0], e)
	return w.record(tagEvent, w.buf)
}

// Replica appends a replica's final state.
func (w *Writer) Replica(s ReplicaState) error {
	b := binary.AppendUvarint(w.buf[:0], s.ID)
	b = binary.AppendUvarint(b, s.Applied)
	b = binary.AppendUvarint(b, s.Digest)
	w.buf = b
	return w.record(tagReplica, b)
}

// Fault appends a fault description.
func (w *Writer) Fault(desc string) error {
	w.buf = append(w.buf[:0], desc...)
	return w.record(tagFault, w.buf)
}

// Close writes the end record (record count and checksum) and flushes. It
// does not close the underlying writer.
func (w *Writer) Close() error {
	if w.ended {
		return w.err
	}
	sum := w.crc.Sum32()
	b := binary.AppendUvarint(w.buf[:0], w.n)
	b = binary.LittleEndian.AppendUint32(b, sum)
	w.record(tagEnd, b)
	w.ended = true
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// Encode writes a whole file.
func Encode(w io.Writer, f *File) error {
	hw, err := NewWriter(w)
	if err != nil {
		return err
	}
	for i := range f.Events {
		if err := hw.Event(&f.Events[i]); err != nil {
			return err
		}
	}
	for _, r := range f.Replicas {
		if err := hw.Replica(r); err != nil {
			return err
		}
	}
	for _, d := range f.Faults {
		if err := hw.Fault(d); err != nil {
			return err
		}
	}
	return hw.Close()
}

func appendEvent(b []byte, e *Event) []byte {
	b = binary.AppendUvarint(b, e.Session)
	b = binary.AppendUvarint(b, e.Seq)
	var flags byte
	if e.Found {
		flags |= flagFound
	}
	b = append(b, byte(e.Level), byte(e.Kind), byte(e.Outcome), flags)
	b = binary.AppendUvarint(b, uint64(len(e.Key)))
	b = append(b, e.Key...)
	b = binary.AppendVarint(b, e.Invoke)
	b = binary.AppendVarint(b, e.Return)
	b = binary.AppendUvarint(b, e.Slot)
	b = binary.AppendUvarint(b, uint64(len(e.Value)))
	b = append(b, e.Value...)
	b = binary.AppendUvarint(b, uint64(len(e.Result)))
	return append(b, e.Result...)
}

// ErrCorrupt is wrapped by every error Decode returns for malformed input.
var ErrCorrupt = errors.New("history: corrupt file")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
