package sim

import (
	"fmt"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/hybridkv/hybridkv/internal/raftlog"
)

// CommittedLog returns the data of the committed log's entries from
// raftlog.FirstEntry to n (a new cluster's log starts with a snapshot just
// before it that holds no state), n the highest index before the first one
// no replica's disk noted as committed (see raftlog.MemDisk.Committed); an
// entry with no data is raft's own. Replicas that noted different entries
// at one index break raft's log matching, which is an error.
func (s *Sim) CommittedLog() ([][]byte, error) {
	all := make(map[uint64]*raftpb.Entry)
	var conflict error
	for _, id := range s.replicas {
		s.nodes[id].disk.Committed(func(e *raftpb.Entry) {
			prev, ok := all[e.GetIndex()]
			switch {
			case !ok:
				all[e.GetIndex()] = e
			case prev.GetTerm() != e.GetTerm() && conflict == nil:
				conflict = fmt.Errorf("sim: committed entry %d has term %d on one replica and %d on replica %d",
					e.GetIndex(), prev.GetTerm(), e.GetTerm(), id)
			}
		})
	}
	if conflict != nil {
		return nil, conflict
	}
	var log [][]byte
	for i := uint64(raftlog.FirstEntry); ; i++ {
		e, ok := all[i]
		if !ok {
			return log, nil
		}
		log = append(log, e.GetData())
	}
}
