package disk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.etcd.io/etcd/server/v3/etcdserver/api/snap"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"

	"github.com/hybridkv/hybridkv/internal/raftlog"
)

// Options open a data directory.
type Options struct {
	// Dir is the replica's data directory; it is created if missing.
	Dir string
	// Fsync syncs every write before Save and SaveSnapshot return. Off,
	// writes reach the operating system only: a process crash loses
	// nothing, a power cut may.
	Fsync  bool
	Logger *slog.Logger
}

// Disk is a replica's data directory. See the package doc.
type Disk struct {
	opts   Options
	lock   *os.File
	walDir string
	snaps  *snap.Snapshotter
	// w is nil until the first write to a blank directory; createMu
	// guards its creation, which the replica's writer (Save, SaveSnapshot)
	// and its core (SaveCompaction) may race to.
	createMu sync.Mutex
	w        *wal.WAL
	zl       *zap.Logger
	// records is the witness log, once opened.
	records *Records

	// state is the hard state last saved, to tell whether a Save must sync.
	state *raftpb.HardState

	// snapMu orders snapshot writes: one from the leader (the writer's)
	// and a compaction (the saver's) may come at once, and each ends by
	// removing the files nothing points at.
	snapMu sync.Mutex

	// saver writes compaction snapshots in the background (see
	// SaveCompaction).
	saver struct {
		mu    sync.Mutex
		idle  *sync.Cond // signalled when busy turns false
		busy  bool
		next  *raftpb.Snapshot
		state io.WriterTo // next's state
		err   error
		// done is the last snapshot written, until Compacted takes it.
		done *raftpb.Snapshot
	}

	// states describes the state files of the snapshots kept, by index;
	// statesMu guards it (the saver adds to it, the replica reads it).
	statesMu sync.Mutex
	states   map[uint64]snapState

	mu        sync.Mutex // guards the statistics, read by Stats
	syncTimes *hdrhistogram.Histogram
	syncTotal time.Duration
	syncs     uint64
	snapshots uint64
	snapTimes *hdrhistogram.Histogram
	snapTotal time.Duration
	snapBytes uint64
}

var _ raftlog.Disk = (*Disk)(nil)

// Open locks the data directory for this process and prepares it.
func Open(opts Options) (*Disk, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, "snap"), 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	lock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	zl := zap.NewNop()
	d := &Disk{
		opts:      opts,
		lock:      lock,
		walDir:    filepath.Join(opts.Dir, "wal"),
		snaps:     snap.New(zl, filepath.Join(opts.Dir, "snap")),
		zl:        zl,
		state:     &raftpb.HardState{},
		states:    make(map[uint64]snapState),
		syncTimes: hdrhistogram.New(1, int64(time.Minute), 3),
		snapTimes: hdrhistogram.New(1, int64(time.Minute), 3),
	}
	d.saver.idle = sync.NewCond(&d.saver.mu)
	return d, nil
}

// Dir is the data directory.
func (d *Disk) Dir() string { return d.opts.Dir }

// Load implements raftlog.Disk.
func (d *Disk) Load() (raftlog.State, error) {
	if !wal.Exist(d.walDir) {
		return raftlog.State{}, nil
	}
	walSnaps, err := wal.ValidSnapshotEntries(d.zl, d.walDir)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return raftlog.State{}, d.corrupt(err)
	}
	var st raftlog.State
	var from walpb.Snapshot
	sn, err := d.snaps.LoadNewestAvailable(walSnaps)
	switch {
	case errors.Is(err, snap.ErrNoSnapshot):
	case err != nil:
		return raftlog.State{}, fmt.Errorf("data dir %s: load snapshot: %w", d.opts.Dir, err)
	default:
		md := sn.GetMetadata()
		desc, err := decodeStateDesc(sn.GetData())
		if err != nil {
			return raftlog.State{}, fmt.Errorf("data dir %s: snapshot %d: %w", d.opts.Dir, md.GetIndex(), err)
		}
		d.keepState(md.GetTerm(), md.GetIndex(), desc)
		st.Snapshot = &raftpb.Snapshot{Metadata: md}
		from = walpb.Snapshot{Index: new(md.GetIndex()), Term: new(md.GetTerm())}
	}
	hs, ents, err := d.openWAL(&from)
	if err != nil {
		return raftlog.State{}, err
	}
	st.HardState, st.Entries = hs, ents
	d.state = hs
	return st, nil
}

// openWAL opens the log for appending after reading it from the snapshot
// on, repairing a torn tail once.
func (d *Disk) openWAL(from *walpb.Snapshot) (*raftpb.HardState, []*raftpb.Entry, error) {
	for repaired := false; ; repaired = true {
		w, err := wal.Open(d.zl, d.walDir, from)
		if err != nil {
			return nil, nil, fmt.Errorf("data dir %s: open wal: %w", d.opts.Dir, err)
		}
		_, hs, ents, err := w.ReadAll()
		if err == nil {
			d.adopt(w)
			return hs, ents, nil
		}
		w.Close()
		if !errors.Is(err, io.ErrUnexpectedEOF) || repaired {
			return nil, nil, d.corrupt(err)
		}
		file, off := locateDamage(d.walDir)
		if !wal.Repair(d.zl, d.walDir) {
			return nil, nil, d.corrupt(err)
		}
		d.opts.Logger.Warn("repaired a torn write at the end of the write-ahead log: "+
			"the last record was incomplete (a crash in the middle of writing it) and was dropped",
			"file", file, "offset", off)
	}
}

// corrupt describes damage the log cannot repair, naming where it is.
func (d *Disk) corrupt(err error) error {
	file, off := locateDamage(d.walDir)
	return fmt.Errorf("data dir %s: the write-ahead log is damaged at %s, offset %d: %w; "+
		"refusing to start rather than drop acknowledged entries", d.opts.Dir, file, off, err)
}

func (d *Disk) adopt(w *wal.WAL) {
	if !d.opts.Fsync {
		w.SetUnsafeNoFsync()
	}
	d.w = w
}

// create makes the log of a blank directory at its first write.
func (d *Disk) create() error {
	d.createMu.Lock()
	defer d.createMu.Unlock()
	if d.w != nil {
		return nil
	}
	w, err := wal.Create(d.zl, d.walDir, nil)
	if err != nil {
		return fmt.Errorf("data dir %s: create wal: %w", d.opts.Dir, err)
	}
	d.adopt(w)
	return nil
}

// Save implements raftlog.Disk. The WAL syncs once per call when the
// entries or the term or vote changed (raft.MustSync); the time a syncing
// Save takes, write and sync, is what Stats reports.
func (d *Disk) Save(hs *raftpb.HardState, ents []*raftpb.Entry) error {
	if hs == nil {
		hs = &raftpb.HardState{}
	}
	if raft.IsEmptyHardState(hs) && len(ents) == 0 {
		return nil
	}
	if err := d.create(); err != nil {
		return err
	}
	sync := d.opts.Fsync && raft.MustSync(hs, d.state, len(ents))
	start := time.Now()
	// Witness records appended meanwhile are synced alongside: both must
	// be durable before what waited for the write goes out.
	var records chan error
	if d.records != nil && d.records.Pending() {
		records = make(chan error, 1)
		go func() { records <- d.records.Sync() }()
	}
	err := d.w.Save(hs, ents)
	if records != nil {
		if rerr := <-records; err == nil {
			err = rerr
		}
	}
	if err != nil {
		return err
	}
	if !raft.IsEmptyHardState(hs) {
		d.state = hs
	}
	if sync {
		d.recordSync(time.Since(start))
	}
	return nil
}

func (d *Disk) recordSync(took time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.syncs++
	d.syncTotal += took
	_ = d.syncTimes.RecordValue(int64(took))
}

// SaveSnapshot implements raftlog.Disk, before it returns (a snapshot from
// the leader is acknowledged once saved); a compaction being written in the
// background finishes first.
func (d *Disk) SaveSnapshot(s *raftpb.Snapshot) error {
	if err := d.create(); err != nil {
		return err
	}
	d.waitSaver()
	return d.saveSnapshot(s, bytes.NewReader(s.GetData()))
}

// saveSnapshot writes the state file, then the snapshot file (metadata
// and the state's descriptor), then its marker in the log, so a crash
// anywhere before the marker leaves a log that still points at the
// previous snapshot; then files nothing points at go.
func (d *Disk) saveSnapshot(s *raftpb.Snapshot, state io.WriterTo) error {
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	start := time.Now()
	md := s.GetMetadata()
	desc, err := d.writeState(md.GetTerm(), md.GetIndex(), state)
	if err != nil {
		return fmt.Errorf("data dir %s: save snapshot: %w", d.opts.Dir, err)
	}
	if err := d.snaps.SaveSnap(&raftpb.Snapshot{Metadata: md, Data: desc.encode()}); err != nil {
		return fmt.Errorf("data dir %s: save snapshot: %w", d.opts.Dir, err)
	}
	d.keepState(md.GetTerm(), md.GetIndex(), desc)
	marker := &walpb.Snapshot{Index: new(md.GetIndex()), Term: new(md.GetTerm()), ConfState: md.GetConfState()}
	if err := d.w.SaveSnapshot(marker); err != nil {
		return err
	}
	d.recordSnapshot(time.Since(start), int(desc.size))
	if err := d.w.ReleaseLockTo(md.GetIndex()); err != nil {
		return err
	}
	return d.purge()
}

// recordSnapshot counts a saved snapshot of size bytes that took took to
// write (file and log marker).
func (d *Disk) recordSnapshot(took time.Duration, size int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.snapshots++
	d.snapTotal += took
	d.snapBytes += uint64(size)
	_ = d.snapTimes.RecordValue(int64(took))
}

// Stats implements raftlog.Disk.
func (d *Disk) Stats() raftlog.DiskStats {
	d.mu.Lock()
	st := raftlog.DiskStats{
		Fsync:     d.opts.Fsync,
		Syncs:     d.syncs,
		SyncP50:   time.Duration(d.syncTimes.ValueAtQuantile(50)),
		SyncP99:   time.Duration(d.syncTimes.ValueAtQuantile(99)),
		SyncMax:   time.Duration(d.syncTimes.Max()),
		Snapshots: d.snapshots,
	}
	d.mu.Unlock()
	st.WALBytes = dirBytes(d.walDir, ".wal")
	snapDir := filepath.Join(d.opts.Dir, "snap")
	st.SnapBytes = dirBytes(snapDir, ".snap") + dirBytes(snapDir, ".state")
	return st
}

// Close implements raftlog.Disk.
func (d *Disk) Close() error {
	d.waitSaver()
	var err error
	if d.w != nil {
		err = d.w.Close()
		d.w = nil
	}
	if d.records != nil {
		if cerr := d.records.f.Close(); err == nil {
			err = cerr
		}
		d.records = nil
	}
	if uerr := unlockDir(d.lock); err == nil {
		err = uerr
	}
	d.lock = nil
	return err
}
