package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
)

// converged waits, after the load has drained, until every running replica
// reports the same applied index and state digest (E1), and describes the
// outcome. The replicas' final states are returned for the checker.
func (r *run) converged(ctx context.Context) (string, []protocol.Status) {
	if r.procs == nil {
		return "", nil
	}
	deadline := time.Now().Add(10 * time.Second)
	var sts []protocol.Status
	for {
		sts = sts[:0]
		r.disks = r.disks[:0]
		for _, p := range r.procs.List() {
			if !p.Running() {
				continue
			}
			if st, err := p.Status(ctx); err == nil {
				sts = append(sts, st.Status)
				r.disks = append(r.disks, diskNote(p.ID, st.Disk))
			}
		}
		if same(sts) {
			return fmt.Sprintf("replicas converged: %d running, applied index %d, state digest %016x",
				len(sts), sts[0].Applied, sts[0].Digest), sts
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Sprintf("replicas did not converge within 10 s: %+v", sts), sts
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func same(sts []protocol.Status) bool {
	if len(sts) == 0 {
		return false
	}
	for _, st := range sts[1:] {
		if st.Applied != sts[0].Applied || st.Digest != sts[0].Digest {
			return false
		}
	}
	return true
}

// diskNote describes what a replica's disk did during the run.
func diskNote(id uint64, d raftlog.DiskStats) string {
	if !d.Fsync {
		return fmt.Sprintf("replica %d disk: fsync OFF (a power cut may lose acknowledged writes); wal %.1f MB, snapshots %.1f MB",
			id, float64(d.WALBytes)/1e6, float64(d.SnapBytes)/1e6)
	}
	ms := func(t time.Duration) float64 { return float64(t.Microseconds()) / 1e3 }
	return fmt.Sprintf("replica %d disk: fsync on, %d syncs, sync p50 %.2f ms p99 %.2f ms max %.2f ms; %d snapshots; wal %.1f MB, snapshots %.1f MB",
		id, d.Syncs, ms(d.SyncP50), ms(d.SyncP99), ms(d.SyncMax), d.Snapshots, float64(d.WALBytes)/1e6, float64(d.SnapBytes)/1e6)
}
