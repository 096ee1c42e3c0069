package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Records is the data directory's witness log (witness.log): a CURP
// witness's records, one frame per Sync — length, CRC-32C, then the
// operations queued since the last one (and a leader's marks: a zero
// length, then the term). Disk.Save syncs queued records in
// parallel with the raft log, so a round pays for one sync's latency.
//
// The core appends on its thread while its driver's writer syncs: mu
// guards the next frame, io the file (a sync or rewrite at a time).
type Records struct {
	path  string
	fsync bool
	d     *Disk

	mu      sync.Mutex
	pending []byte // the next frame: header room, then encoded records
	// spare is the buffer the last sync wrote, reused for a later frame.
	spare []byte

	io   sync.Mutex
	f    *os.File
	size atomic.Int64
	// allocated is the preallocated size of the file.
	allocated int64
}

var _ witness.Log = (*Records)(nil)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const frameHeader = 8

// recordsChunk is how far ahead of its frames the witness log is filled
// with zeros. Space reserved with fallocate is "unwritten" to the file
// system, and a data sync into a block of it also commits the block's
// conversion to written: BenchmarkRecordsSync (2.5 KB frames, ext4) took
// 132–136 µs and 66–69 µs of CPU a frame that way, and 97–98 µs and
// 51–52 µs in zeros written ahead. The next sync flushes the zeros with
// its frame, once a chunk. (etcd's WAL reserves its segments with
// fallocate and keeps that cost.)
const recordsChunk = 1 << 20

// Records opens the data directory's witness log; Close closes it.
func (d *Disk) Records() (*Records, error) {
	if d.records != nil {
		return d.records, nil
	}
	path := filepath.Join(d.opts.Dir, "witness.log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	d.records = &Records{path: path, fsync: d.opts.Fsync, f: f, d: d, pending: make([]byte, frameHeader),
		spare: make([]byte, frameHeader), allocated: info.Size()}
	return d.records, nil
}

// Load implements witness.Log. The frames end where the preallocated
// zeros begin. A damaged frame followed by nothing but zeros is a torn
// write (a crash in the middle of it) and is cut off with a log line; one
// followed by more frames stops the replica.
func (l *Records) Load() ([]witness.Entry, error) {
	raw, err := io.ReadAll(io.NewSectionReader(l.f, 0, 1<<62))
	if err != nil {
		return nil, err
	}
	var ops []witness.Entry
	off := 0
	for off+4 <= len(raw) && binary.LittleEndian.Uint32(raw[off:]) != 0 {
		batch, n, err := decodeFrame(raw[off:])
		if err != nil {
			if !zeros(raw[min(off+n, len(raw)):]) {
				return nil, fmt.Errorf("witness log %s is damaged at offset %d: %w; refusing to start "+
					"rather than forget operations this witness acknowledged", l.path, off, err)
			}
			l.d.opts.Logger.Warn("repaired a torn write at the end of the witness log: "+
				"the last frame was incomplete (a crash in the middle of writing it) and was dropped",
				"file", l.path, "offset", off)
			if _, err := l.f.WriteAt(make([]byte, min(n, len(raw)-off)), int64(off)); err != nil {
				return nil, err
			}
			break
		}
		ops = append(ops, batch...)
		off += n
	}
	l.size.Store(int64(off))
	return ops, nil
}

func zeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// reserve makes sure zeros are written for n more bytes past the frames.
func (l *Records) reserve(n int64) error {
	size := l.size.Load()
	if size+n <= l.allocated {
		return nil
	}
	to := (size+n)/recordsChunk*recordsChunk + recordsChunk
	from := max(l.allocated, size)
	if _, err := l.f.WriteAt(make([]byte, to-from), from); err != nil {
		return fmt.Errorf("witness log %s: fill with zeros: %w", l.path, err)
	}
	l.allocated = to
	return nil
}

// decodeFrame reads one frame and returns its records and length.
func decodeFrame(b []byte) ([]witness.Entry, int, error) {
	if len(b) < frameHeader {
		return nil, len(b), io.ErrUnexpectedEOF
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > len(b)-frameHeader {
		return nil, len(b), io.ErrUnexpectedEOF
	}
	body := b[frameHeader : frameHeader+n]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, frameHeader + n, errors.New("CRC mismatch")
	}
	var ops []witness.Entry
	for len(body) > 0 {
		if len(body) < 4 || int(binary.LittleEndian.Uint32(body)) > len(body)-4 {
			return nil, frameHeader + n, errors.New("bad record length")
		}
		size := int(binary.LittleEndian.Uint32(body))
		if size == 0 { // a leader's mark: the term follows
			term, k := binary.Uvarint(body[4:])
			if k <= 0 || term == 0 {
				return nil, frameHeader + n, errors.New("bad lead mark")
			}
			ops = append(ops, witness.Entry{Lead: term})
			body = body[4+k:]
			continue
		}
		prev, k := binary.Uvarint(body[4 : 4+size])
		if k <= 0 {
			return nil, frameHeader + n, errors.New("bad record")
		}
		e := witness.Entry{PrevWeak: prev}
		if err := wire.DecodeOp(body[4+k:4+size], &e.Op); err != nil {
			return nil, frameHeader + n, err
		}
		ops = append(ops, e)
		body = body[4+size:]
	}
	return ops, frameHeader + n, nil
}

// appendRecord appends one record: its length, the session's previous weak
// write, the operation.
func appendRecord(b []byte, op *wire.Op, prevWeak uint64) []byte {
	at := len(b)
	b = binary.AppendUvarint(append(b, 0, 0, 0, 0), prevWeak)
	b = wire.AppendOp(b, op)
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// appendLead appends a leader's mark: a zero length, then the term.
func appendLead(b []byte, term uint64) []byte {
	return binary.AppendUvarint(append(b, 0, 0, 0, 0), term)
}

// sealFrame fills in the header of a frame built after frameHeader bytes.
func sealFrame(b []byte) []byte {
	binary.LittleEndian.PutUint32(b, uint32(len(b)-frameHeader))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(b[frameHeader:], castagnoli))
	return b
}

// Append implements witness.Log.
func (l *Records) Append(op *wire.Op, prevWeak uint64) {
	l.mu.Lock()
	l.pending = appendRecord(l.pending, op, prevWeak)
	l.mu.Unlock()
}

// Lead implements witness.Log.
func (l *Records) Lead(term uint64) {
	l.mu.Lock()
	l.pending = appendLead(l.pending, term)
	l.mu.Unlock()
}

// Pending implements witness.Log.
func (l *Records) Pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dirty()
}

func (l *Records) dirty() bool { return len(l.pending) > frameHeader }

// Sync implements witness.Log: it takes the records appended so far as
// one frame, so appends go on while the frame is written.
func (l *Records) Sync() error {
	l.io.Lock()
	defer l.io.Unlock()
	l.mu.Lock()
	if !l.dirty() {
		l.mu.Unlock()
		return nil
	}
	frame := sealFrame(l.pending)
	l.pending, l.spare = l.spare[:frameHeader], nil
	l.mu.Unlock()
	if err := l.reserve(int64(len(frame))); err != nil {
		return err
	}
	size := l.size.Load()
	if _, err := l.f.WriteAt(frame, size); err != nil {
		return err
	}
	l.size.Store(size + int64(len(frame)))
	l.mu.Lock()
	l.spare = frame[:frameHeader]
	l.mu.Unlock()
	if !l.fsync {
		return nil
	}
	return fileutil.Fdatasync(l.f)
}

// Rewrite implements witness.Log: the live records go to a new file that
// replaces the log in one rename. Entries hold every record appended, so
// the next frame is dropped.
func (l *Records) Rewrite(entries []witness.Entry) error {
	l.io.Lock()
	defer l.io.Unlock()
	l.mu.Lock()
	l.pending = l.pending[:frameHeader]
	l.mu.Unlock()
	tmp := l.path + ".tmp"
	frame := make([]byte, frameHeader)
	for i := range entries {
		if e := &entries[i]; e.Lead != 0 {
			frame = appendLead(frame, e.Lead)
		} else {
			frame = appendRecord(frame, &e.Op, e.PrevWeak)
		}
	}
	frame = sealFrame(frame)
	if err := writeSynced(tmp, frame); err != nil {
		return err
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(l.path)); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	l.f.Close()
	l.f, l.allocated = f, int64(len(frame))
	l.size.Store(int64(len(frame)))
	return nil
}

// Bytes implements witness.Log.
func (l *Records) Bytes() int64 { return l.size.Load() }

func writeSynced(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
