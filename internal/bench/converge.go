package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/hybridkv/hybridkv/internal/protocol"
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
		for _, p := range r.procs.Procs {
			if !p.Running() {
				continue
			}
			if st, err := p.Status(ctx); err == nil {
				sts = append(sts, st)
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
