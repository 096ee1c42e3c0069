package disk

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
)

// keepSnapshots is how many snapshot files stay: the newest, and one to
// fall back on should it be unreadable.
const keepSnapshots = 2

// purge removes the log segments the WAL released (all their entries
// precede the newest snapshot) and all but the newest snapshots.
func (d *Disk) purge() error {
	names, err := fileutil.ReadDir(d.walDir, fileutil.WithExt(".wal"))
	if err != nil {
		return err
	}
	for _, name := range names {
		path := filepath.Join(d.walDir, name)
		// The WAL holds a lock on every segment it still needs.
		l, err := fileutil.TryLockFile(path, os.O_WRONLY, fileutil.PrivateFileMode)
		if err != nil {
			break
		}
		rmErr := os.Remove(path)
		l.Close()
		if rmErr != nil {
			return rmErr
		}
	}
	snapDir := filepath.Join(d.opts.Dir, "snap")
	snaps, err := fileutil.ReadDir(snapDir, fileutil.WithExt(".snap"))
	if err != nil {
		return err
	}
	slices.Sort(snaps) // named term-index in fixed-width hex: oldest first
	for len(snaps) > keepSnapshots {
		if err := os.Remove(filepath.Join(snapDir, snaps[0])); err != nil {
			return err
		}
		snaps = snaps[1:]
	}
	return d.purgeStates(snapDir, snaps)
}

// purgeStates removes the state files of the snapshots no longer kept, and
// any a crash left half written, then forgets them.
func (d *Disk) purgeStates(snapDir string, kept []string) error {
	keep := make(map[string]bool, len(kept))
	for _, name := range kept {
		keep[strings.TrimSuffix(name, ".snap")+".state"] = true
	}
	entries, err := os.ReadDir(snapDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		stale := strings.HasSuffix(name, ".state") && !keep[name]
		if stale || strings.HasSuffix(name, ".state.tmp") {
			if err := os.Remove(filepath.Join(snapDir, name)); err != nil {
				return err
			}
		}
	}
	d.statesMu.Lock()
	defer d.statesMu.Unlock()
	for index, st := range d.states {
		if !keep[stateName(st.term, index)] {
			delete(d.states, index)
		}
	}
	return nil
}

// locateDamage finds the first record of the log that does not decode,
// segment by segment: its segment's name and the offset of the record.
func locateDamage(walDir string) (file string, offset int64) {
	names, err := fileutil.ReadDir(walDir, fileutil.WithExt(".wal"))
	if err != nil {
		return walDir, 0
	}
	var crc uint32
	for _, name := range names {
		off, next, err := scanSegment(filepath.Join(walDir, name), crc)
		if err != nil {
			return filepath.Join(walDir, name), off
		}
		crc = next
	}
	return walDir, 0
}

// scanSegment decodes one segment, chaining the CRC from the previous one;
// on failure it returns the offset where the bad record starts (the end of
// the last good one).
func scanSegment(path string, prevCRC uint32) (int64, uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	dec := wal.NewDecoder(fileutil.NewFileReader(f))
	dec.UpdateCRC(prevCRC)
	for {
		var rec walpb.Record
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			return dec.LastOffset(), dec.LastCRC(), nil
		}
		if err != nil {
			return dec.LastOffset(), 0, err
		}
		if rec.GetType() == wal.CrcType { // the running CRC, carried over
			dec.UpdateCRC(rec.GetCrc())
		}
	}
}

// dirBytes is the space the files with ext in dir take.
func dirBytes(dir, ext string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}
