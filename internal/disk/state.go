package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
)

// A snapshot's applied state lives in a file of its own beside the
// snapshotter's .snap file, which holds the raft metadata and a small
// descriptor of the state: its size and CRC-32C. The snapshotter writes a
// snapshot in one piece from one buffer (and copies it twice on the way);
// for a state of a hundred megabytes and more that meant three copies of it
// on the heap at once, and a burst of dirty pages that the next log sync had
// to wait behind. The state file is streamed from the encoder instead, and
// synced every stateSyncEvery bytes so the log's syncs never queue behind
// much of it.

// stateSyncEvery is how much of a state file is written between syncs.
const stateSyncEvery = 8 << 20

// stateMagic opens a descriptor; a .snap whose data does not start with it
// holds its state inline (written before state files existed).
const stateMagic = "hkvstate"

// stateDesc describes a snapshot's state file.
type stateDesc struct {
	size int64
	crc  uint32
	// inline is the state itself when the .snap holds it.
	inline []byte
}

func (s stateDesc) encode() []byte {
	b := append([]byte(nil), stateMagic...)
	b = binary.AppendUvarint(b, uint64(s.size))
	return binary.LittleEndian.AppendUint32(b, s.crc)
}

// decodeStateDesc reads the descriptor a .snap holds as its data.
func decodeStateDesc(data []byte) (stateDesc, error) {
	if len(data) < len(stateMagic) || string(data[:len(stateMagic)]) != stateMagic {
		return stateDesc{size: int64(len(data)), inline: data}, nil
	}
	b := data[len(stateMagic):]
	size, n := binary.Uvarint(b)
	if n <= 0 || len(b[n:]) != 4 {
		return stateDesc{}, errors.New("malformed state descriptor")
	}
	return stateDesc{size: int64(size), crc: binary.LittleEndian.Uint32(b[n:])}, nil
}

// stateName is the state file of the snapshot at term and index, named
// like the snapshotter names its files.
func stateName(term, index uint64) string {
	return fmt.Sprintf("%016x-%016x.state", term, index)
}

// writeState streams a snapshot's state into its file through a temporary
// one renamed into place once complete (and, with fsync, synced), so a
// state file under its final name is always whole.
func (d *Disk) writeState(term, index uint64, state io.WriterTo) (stateDesc, error) {
	dir := filepath.Join(d.opts.Dir, "snap")
	path := filepath.Join(dir, stateName(term, index))
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return stateDesc{}, err
	}
	w := &stateWriter{f: f, fsync: d.opts.Fsync, crc: crc32.New(castagnoli)}
	_, err = state.WriteTo(w)
	if err == nil {
		err = w.sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil && d.opts.Fsync {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return stateDesc{}, fmt.Errorf("write %s: %w", path, err)
	}
	return stateDesc{size: w.size, crc: w.crc.Sum32()}, nil
}

// stateWriter writes a state file, checksumming it and syncing every
// stateSyncEvery bytes.
type stateWriter struct {
	f        *os.File
	fsync    bool
	crc      hash.Hash32
	size     int64
	unsynced int64
}

func (w *stateWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.crc.Write(b[:n])
	w.size += int64(n)
	w.unsynced += int64(n)
	if err == nil && w.unsynced >= stateSyncEvery {
		err = w.sync()
	}
	return n, err
}

func (w *stateWriter) sync() error {
	w.unsynced = 0
	if !w.fsync {
		return nil
	}
	return fileutil.Fdatasync(w.f)
}

// readState reads and checks the state file a descriptor describes.
func (d *Disk) readState(term, index uint64, desc stateDesc) ([]byte, error) {
	if desc.inline != nil || desc.size == 0 {
		return desc.inline, nil
	}
	path := filepath.Join(d.opts.Dir, "snap", stateName(term, index))
	data, err := os.ReadFile(path)
	switch {
	case err != nil:
		return nil, fmt.Errorf("data dir %s: snapshot state: %w", d.opts.Dir, err)
	case int64(len(data)) != desc.size:
		return nil, fmt.Errorf("data dir %s: snapshot state %s holds %d bytes, its snapshot says %d; "+
			"refusing to start from a damaged snapshot", d.opts.Dir, path, len(data), desc.size)
	case crc32.Checksum(data, castagnoli) != desc.crc:
		return nil, fmt.Errorf("data dir %s: snapshot state %s fails its CRC check; "+
			"refusing to start from a damaged snapshot", d.opts.Dir, path)
	}
	return data, nil
}
