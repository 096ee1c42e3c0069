package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// Records is the data directory's witness log (witness.log): a CURP
// witness's records, one frame per Append — length, CRC-32C, then the
// operations — synced before Append returns.
type Records struct {
	path  string
	fsync bool
	f     *os.File
	size  int64
	d     *Disk
}

var _ witness.Log = (*Records)(nil)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const frameHeader = 8

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
	d.records = &Records{path: path, fsync: d.opts.Fsync, f: f, d: d}
	return d.records, nil
}

// Load implements witness.Log. A torn last frame is cut off with a log
// line; a damaged frame before the last stops the replica.
func (l *Records) Load() ([]wire.Op, error) {
	raw, err := io.ReadAll(io.NewSectionReader(l.f, 0, 1<<62))
	if err != nil {
		return nil, err
	}
	var ops []wire.Op
	off := 0
	for off < len(raw) {
		batch, n, err := decodeFrame(raw[off:])
		if err != nil {
			if off+n < len(raw) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("witness log %s is damaged at offset %d: %w; refusing to start "+
					"rather than forget operations this witness acknowledged", l.path, off, err)
			}
			l.d.opts.Logger.Warn("repaired a torn write at the end of the witness log: "+
				"the last frame was incomplete (a crash in the middle of writing it) and was dropped",
				"file", l.path, "offset", off, "bytes", len(raw)-off)
			if err := l.f.Truncate(int64(off)); err != nil {
				return nil, err
			}
			break
		}
		ops = append(ops, batch...)
		off += n
	}
	l.size = int64(off)
	return ops, nil
}

// decodeFrame reads one frame and returns its operations and length.
func decodeFrame(b []byte) ([]wire.Op, int, error) {
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
	var ops []wire.Op
	for len(body) > 0 {
		size, k := binary.Uvarint(body)
		if k <= 0 || size > uint64(len(body)-k) {
			return nil, frameHeader + n, errors.New("bad record length")
		}
		var op wire.Op
		if err := wire.DecodeOp(body[k:k+int(size)], &op); err != nil {
			return nil, frameHeader + n, err
		}
		ops = append(ops, op)
		body = body[k+int(size):]
	}
	return ops, frameHeader + n, nil
}

func encodeFrame(ops []wire.Op) []byte {
	b := make([]byte, frameHeader, 256)
	for i := range ops {
		rec := wire.AppendOp(nil, &ops[i])
		b = binary.AppendUvarint(b, uint64(len(rec)))
		b = append(b, rec...)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)-frameHeader))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(b[frameHeader:], castagnoli))
	return b
}

// Append implements witness.Log.
func (l *Records) Append(ops []wire.Op) error {
	frame := encodeFrame(ops)
	if _, err := l.f.WriteAt(frame, l.size); err != nil {
		return err
	}
	l.size += int64(len(frame))
	if !l.fsync {
		return nil
	}
	return l.f.Sync()
}

// Rewrite implements witness.Log: the live records go to a new file that
// replaces the log in one rename.
func (l *Records) Rewrite(ops []wire.Op) error {
	tmp := l.path + ".tmp"
	frame := encodeFrame(ops)
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
	l.f, l.size = f, int64(len(frame))
	return nil
}

// Bytes implements witness.Log.
func (l *Records) Bytes() int64 { return l.size }

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
