package epaxos

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/raftlog"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// A replica's durable state is a log of records on its disk, as raft log
// entries of term 1: each one an instance's state after a change (the
// last one of an instance wins), or a reservation of instance numbers.
const (
	recInstance byte = iota + 1
	recReserve
	recGenesis
)

// recordLog gathers a round's records.
type recordLog struct {
	next uint64 // the index of the next record
	ents []*raftpb.Entry
	// sinceSnapshot counts the records appended since the last snapshot.
	sinceSnapshot uint64
}

func (l *recordLog) append(data []byte) {
	l.ents = append(l.ents, &raftpb.Entry{Term: new(uint64(1)), Index: new(l.next), Data: data})
	l.next++
	l.sinceSnapshot++
}

func (l *recordLog) instance(inst *instance) { l.append(encodeInstance(inst, broken.promiseNotKept)) }

// encodeInstance is an instance's record; forgetPromise, for a mutation
// test, keeps the accepted ballot where the promised one belongs.
func encodeInstance(inst *instance, forgetPromise bool) []byte {
	b := []byte{recInstance, byte(inst.status)}
	flags := byte(0)
	if inst.agreed {
		flags |= 1
	}
	if inst.cmd.Noop {
		flags |= 2
	}
	b = append(b, flags)
	bal := inst.bal
	if forgetPromise {
		bal = inst.vbal
	}
	b = appendUvarints(b, uint64(inst.id.Replica), inst.id.Num, bal, inst.vbal)
	b = wire.AppendCommand(b, &inst.cmd)
	return wire.AppendInstances(b, inst.deps)
}

func (l *recordLog) reserve(upTo uint64) {
	l.append(appendUvarints([]byte{recReserve}, upTo))
}

// take hands the round's records, and a snapshot if one is due, to the
// driver as its write.
func (l *recordLog) take(disk raftlog.Disk, snap *raftpb.Snapshot, data []byte) protocol.Write {
	if len(l.ents) == 0 && snap == nil {
		return nil
	}
	w := &write{disk: disk, ents: l.ents, snap: snap, data: data}
	l.ents = nil
	return w
}

// write is a round's records, made durable by one sync, and perhaps a
// snapshot that replaces every record up to its index.
type write struct {
	disk raftlog.Disk
	ents []*raftpb.Entry
	snap *raftpb.Snapshot
	data []byte
}

// Do implements protocol.Write.
func (w *write) Do() error {
	if len(w.ents) > 0 {
		if err := w.disk.Save(nil, w.ents); err != nil {
			return fmt.Errorf("epaxos: save: %w", err)
		}
	}
	if w.snap != nil {
		if err := w.disk.SaveCompaction(w.snap, bytes.NewReader(w.data)); err != nil {
			return fmt.Errorf("epaxos: save snapshot: %w", err)
		}
	}
	return nil
}

// Merge implements protocol.Write: the later snapshot replaces an earlier
// one.
func (w *write) Merge(later protocol.Write) {
	l := later.(*write)
	w.ents = append(w.ents, l.ents...)
	if l.snap != nil {
		w.snap, w.data = l.snap, l.data
	}
}

func appendUvarints(b []byte, vs ...uint64) []byte {
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// load rebuilds the replica from its disk: every instance's last state,
// the numbers reserved, and, by executing the committed instances again
// from an empty store, the applied state.
func (r *Replica) load(bootstrap bool) error {
	st, err := r.disk.Load()
	if err != nil {
		return err
	}
	if st.Blank() {
		if !bootstrap {
			return fmt.Errorf("epaxos: replica %d: blank disk and no bootstrap: a replica that lost its state must not answer as if it had not", r.id)
		}
		r.records.next = 1
		r.records.append([]byte{recGenesis})
		return nil
	}
	r.records.next = 1
	if st.Snapshot != nil && !raft.IsEmptySnap(st.Snapshot) {
		md := st.Snapshot.GetMetadata()
		data, err := r.disk.SnapshotData(md)
		if err != nil {
			return err
		}
		if err := r.restore(data); err != nil {
			return fmt.Errorf("epaxos: replica %d: snapshot %d: %w", r.id, md.GetIndex(), err)
		}
		r.records.next = md.GetIndex() + 1
	}
	maxOwn := max(r.gc.mine[r.id], r.gc.dropped[r.id])
	for id, inst := range r.instances {
		if id.Replica == r.id && inst.status != wire.EUnknown {
			maxOwn = max(maxOwn, id.Num)
		}
	}
	for _, e := range st.Entries {
		r.records.next = e.GetIndex() + 1
		if err := r.replay(e.GetData(), &maxOwn); err != nil {
			return fmt.Errorf("epaxos: replica %d: record %d: %w", r.id, e.GetIndex(), err)
		}
	}
	r.nextNum = max(maxOwn+1, r.reserved)
	// A number of this replica's row it holds nothing of may have gone
	// out in messages whose records were lost, or never have been used:
	// recover each, so that every replica learns what it holds (a no-op
	// if none knows it) and the row's executed mark can pass it.
	for n := r.gc.mine[r.id] + 1; n < r.nextNum; n++ {
		r.needed(r.get(wire.Instance{Replica: r.id, Num: n}))
	}
	ids := make([]wire.Instance, 0, len(r.instances))
	for id := range r.instances {
		ids = append(ids, id)
	}
	sortInstances(ids)
	for _, id := range ids {
		if r.instances[id].status >= wire.ECommitted {
			r.exec.committed(id)
		}
	}
	r.exec.run(r)
	return nil
}

// replay applies one record.
func (r *Replica) replay(data []byte, maxOwn *uint64) error {
	if len(data) == 0 {
		return fmt.Errorf("empty record")
	}
	rd := wire.NewReader(data[1:])
	switch data[0] {
	case recGenesis:
	case recReserve:
		r.reserved = max(r.reserved, rd.Uvarint())
	case recInstance:
		if err := r.replayInstance(data, false); err != nil {
			return err
		}
		rd.Byte() // status
		rd.Byte() // flags
		id := wire.Instance{Replica: wire.NodeID(rd.Uvarint()), Num: rd.Uvarint()}
		if inst := r.instances[id]; id.Replica == r.id && inst != nil && inst.status != wire.EUnknown {
			*maxOwn = max(*maxOwn, id.Num)
		}
		return nil
	default:
		return fmt.Errorf("unknown record kind %d", data[0])
	}
	return rd.Err(true)
}

// replayInstance applies an instance's record. From a snapshot an executed
// instance stays executed (the snapshot's store holds its effects); from
// the records a committed one is executed again, and a record never
// changes an instance a snapshot had executed.
func (r *Replica) replayInstance(data []byte, fromSnapshot bool) error {
	if len(data) == 0 || data[0] != recInstance {
		return fmt.Errorf("not an instance record")
	}
	rd := wire.NewReader(data[1:])
	status := wire.EStatus(rd.Byte())
	flags := rd.Byte()
	id := wire.Instance{Replica: wire.NodeID(rd.Uvarint()), Num: rd.Uvarint()}
	bal, vbal := rd.Uvarint(), rd.Uvarint()
	var cmd wire.Command
	rd.Command(&cmd)
	cmd.Noop = flags&2 != 0
	deps := rd.Instances()
	if err := rd.Err(true); err != nil {
		return err
	}
	if r.gc.forgotten(id) {
		return nil
	}
	inst := r.get(id)
	if inst.status == wire.EExecutedStatus {
		return nil
	}
	if status >= wire.ECommitted {
		if !fromSnapshot || status == wire.ECommitted {
			status = wire.ECommitted // executed again once loaded
		}
		delete(r.uncommitted, id)
	}
	inst.status, inst.bal, inst.vbal, inst.agreed, inst.deps = status, bal, vbal, flags&1 != 0, deps
	r.setCommand(inst, cmd)
	return nil
}
