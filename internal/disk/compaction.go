package disk

import (
	"fmt"
	"io"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/hybridkv/hybridkv/internal/raftlog"
)

// slowSnapshot is how long a snapshot may take to write before it is
// logged.
const slowSnapshot = 500 * time.Millisecond

// SaveCompaction implements raftlog.Disk: the snapshot's state is encoded
// straight into its file in the background. Encoding and writing take far
// longer than a raft round (a tenth of a second and more for a million
// keys, then a file the size of the state plus syncs), and a replica that
// stopped for them in the middle of a run stalled its clients and, with the
// others stopping at the same index, let an election timeout pass. The log
// keeps every entry the snapshot covers until it is durable (the marker and
// the release of older segments come after the file), so a crash meanwhile
// restarts from the previous snapshot. Only the newest waiting snapshot is
// written: a newer one covers an older one.
func (d *Disk) SaveCompaction(s *raftpb.Snapshot, state io.WriterTo) error {
	if err := d.create(); err != nil {
		return err
	}
	d.saver.mu.Lock()
	defer d.saver.mu.Unlock()
	err := d.saver.err
	d.saver.err = nil
	d.saver.next, d.saver.state = s, state
	if !d.saver.busy {
		d.saver.busy = true
		go d.saveInBackground()
	}
	return err
}

// Compacted implements raftlog.Disk.
func (d *Disk) Compacted() *raftpb.Snapshot {
	d.saver.mu.Lock()
	defer d.saver.mu.Unlock()
	s := d.saver.done
	d.saver.done = nil
	return s
}

func (d *Disk) saveInBackground() {
	for {
		d.saver.mu.Lock()
		s, state := d.saver.next, d.saver.state
		d.saver.next, d.saver.state = nil, nil
		if s == nil {
			d.saver.busy = false
			d.saver.idle.Broadcast()
			d.saver.mu.Unlock()
			return
		}
		d.saver.mu.Unlock()
		start := time.Now()
		err := d.saveSnapshot(s, state)
		if took := time.Since(start); took > slowSnapshot {
			d.opts.Logger.Warn("slow snapshot", "index", s.GetMetadata().GetIndex(), "took", took)
		}
		d.saver.mu.Lock()
		if err != nil {
			d.opts.Logger.Error("save snapshot", "index", s.GetMetadata().GetIndex(), "err", err)
			d.saver.err = err
		} else {
			d.saver.done = s
		}
		d.saver.mu.Unlock()
	}
}

// waitSaver returns once no snapshot is being written in the background.
func (d *Disk) waitSaver() {
	d.saver.mu.Lock()
	for d.saver.busy {
		d.saver.idle.Wait()
	}
	d.saver.mu.Unlock()
}

// snapState is a kept snapshot's term and state file.
type snapState struct {
	term uint64
	desc stateDesc
}

func (d *Disk) keepState(term, index uint64, desc stateDesc) {
	d.statesMu.Lock()
	defer d.statesMu.Unlock()
	d.states[index] = snapState{term: term, desc: desc}
}

// SnapshotData implements raftlog.Disk: it reads the state file of a
// snapshot this disk keeps and checks it against its descriptor.
func (d *Disk) SnapshotData(md *raftpb.SnapshotMetadata) ([]byte, error) {
	d.statesMu.Lock()
	st, ok := d.states[md.GetIndex()]
	d.statesMu.Unlock()
	if !ok {
		if md.GetIndex() <= raftlog.FirstEntry-1 {
			return nil, nil // a new cluster's first snapshot holds no state
		}
		return nil, fmt.Errorf("data dir %s: no snapshot at index %d is kept", d.opts.Dir, md.GetIndex())
	}
	return d.readState(st.term, md.GetIndex(), st.desc)
}
