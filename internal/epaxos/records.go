package epaxos

import (
	"encoding/binary"
	"fmt"

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
}

func (l *recordLog) append(data []byte) {
	l.ents = append(l.ents, &raftpb.Entry{Term: new(uint64(1)), Index: new(l.next), Data: data})
	l.next++
}

func (l *recordLog) instance(inst *instance) {
	b := []byte{recInstance, byte(inst.status)}
	flags := byte(0)
	if inst.agreed {
		flags |= 1
	}
	if inst.cmd.Noop {
		flags |= 2
	}
	b = append(b, flags)
	b = appendUvarints(b, uint64(inst.id.Replica), inst.id.Num, inst.bal, inst.vbal)
	b = wire.AppendCommand(b, &inst.cmd)
	b = wire.AppendInstances(b, inst.deps)
	l.append(b)
}

func (l *recordLog) reserve(upTo uint64) {
	l.append(appendUvarints([]byte{recReserve}, upTo))
}

// take hands the round's records to the driver as its write.
func (l *recordLog) take(disk raftlog.Disk) protocol.Write {
	if len(l.ents) == 0 {
		return nil
	}
	w := &write{disk: disk, ents: l.ents}
	l.ents = nil
	return w
}

// write is a round's records, made durable by one sync.
type write struct {
	disk raftlog.Disk
	ents []*raftpb.Entry
}

// Do implements protocol.Write.
func (w *write) Do() error {
	if err := w.disk.Save(nil, w.ents); err != nil {
		return fmt.Errorf("epaxos: save: %w", err)
	}
	return nil
}

// Merge implements protocol.Write.
func (w *write) Merge(later protocol.Write) {
	w.ents = append(w.ents, later.(*write).ents...)
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
	if st.Snapshot != nil {
		r.records.next = st.Snapshot.GetMetadata().GetIndex() + 1
	}
	maxOwn := uint64(0)
	for _, e := range st.Entries {
		r.records.next = e.GetIndex() + 1
		if err := r.replay(e.GetData(), &maxOwn); err != nil {
			return fmt.Errorf("epaxos: replica %d: record %d: %w", r.id, e.GetIndex(), err)
		}
	}
	r.nextNum = max(maxOwn+1, r.reserved)
	// Numbers between the last instance this replica kept and the end of
	// its reservation may have gone out in messages whose records were
	// lost: recover each, so that every replica learns its outcome.
	for n := maxOwn + 1; n < r.nextNum; n++ {
		r.needed(r.get(wire.Instance{Replica: r.id, Num: n}))
	}
	ids := make([]wire.Instance, 0, len(r.instances))
	for id, inst := range r.instances {
		if inst.status >= wire.ECommitted {
			ids = append(ids, id)
		} else if inst.id.Replica == r.id && inst.status != wire.EUnknown {
			r.needed(inst)
		}
	}
	sortInstances(ids)
	for _, id := range ids {
		r.exec.committed(id)
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
		inst := r.get(id)
		if status >= wire.ECommitted {
			status = wire.ECommitted // executed again below
			delete(r.uncommitted, id)
		}
		inst.status, inst.bal, inst.vbal, inst.agreed, inst.deps = status, bal, vbal, flags&1 != 0, deps
		r.setCommand(inst, cmd)
		if id.Replica == r.id && status != wire.EUnknown {
			*maxOwn = max(*maxOwn, id.Num)
		}
	default:
		return fmt.Errorf("unknown record kind %d", data[0])
	}
	return rd.Err(true)
}
