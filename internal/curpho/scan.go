package curpho

import (
	"github.com/hybridkv/hybridkv/internal/readgate"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// weakScan answers a weak scan as weakRead answers a get: from the applied
// state, with the session's pooled earlier weak writes to keys of its range
// on top, each key's latest by the session's order. ReadDep names the
// latest of those it shows, so that the reply waits for the round's write.
func (x *Replica) weakScan(op *wire.Op) *wire.Reply {
	st := x.Store()
	read, ok := wire.ScanRead(op)
	if !ok {
		return readgate.ScanAnswer(st, op.ID, false, nil)
	}
	r := st.Scan(&read)
	writes, dep := ownWritesIn(x.Pool(), op, &read, &x.work)
	if len(writes) > 0 {
		r = wire.Overlay(&read, r, writes, func(key string) bool {
			_, found := st.Read(key)
			return found
		})
	}
	rep := readgate.ScanAnswer(st, op.ID, true, &r)
	rep.ReadDep = dep
	return rep
}

// ownWritesIn returns the effect of the session's pooled weak writes issued
// before op on the keys read covers, the latest per key by the session's
// order (see latestOwnWrite), and the latest of them all.
func ownWritesIn(pool *witness.Pool, op *wire.Op, read *wire.TxnOp, work *work) ([]wire.KeyWrite, wire.OpID) {
	latest := make(map[string]*witness.Record)
	var dep wire.OpID
	pool.Session(op.ID.Session, func(rec *witness.Record) {
		work.ownWriteSteps++
		id := rec.Op.ID
		if id.Seq >= op.ID.Seq || !isWeakWrite(rec) || !read.Covers(rec.Op.Key) {
			return
		}
		if own := latest[rec.Op.Key]; own == nil || id.Seq > own.Op.ID.Seq {
			latest[rec.Op.Key] = rec
		}
		if id.Seq > dep.Seq {
			dep = id
		}
	})
	writes := make([]wire.KeyWrite, 0, len(latest))
	for key, rec := range latest {
		found, value := readOf(&rec.Op)
		writes = append(writes, wire.KeyWrite{Key: key, Found: found, Value: value})
	}
	return writes, dep
}
