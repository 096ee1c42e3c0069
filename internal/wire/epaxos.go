package wire

import (
	"cmp"
	"encoding/binary"
	"fmt"
)

// Instance names an EPaxos instance: the replica that opened it (its
// command leader) and its number in that replica's row.
type Instance struct {
	Replica NodeID
	Num     uint64
}

// Compare orders instances by number, then replica: the order in which
// the instances of one strongly connected component execute.
func (i Instance) Compare(o Instance) int {
	if c := cmp.Compare(i.Num, o.Num); c != 0 {
		return c
	}
	return cmp.Compare(i.Replica, o.Replica)
}

func (i Instance) String() string { return fmt.Sprintf("%d.%d", i.Replica, i.Num) }

// Slot is the store's slot of the instance's op-th operation: the same on
// every replica (EPaxos has no log; a slot names a write, it does not
// order writes of different keys). Replies carry it, and EPaxos-HO's
// client reads the instance back with SlotInstance.
func (i Instance) Slot(op int) uint64 { return i.Num<<20 | uint64(op)<<8 | uint64(i.Replica) }

// SlotOp is the index, in its instance's command, of the operation a Slot
// names.
func SlotOp(slot uint64) int { return int(slot >> 8 & 0xfff) }

// SlotInstance is the instance a Slot names.
func SlotInstance(slot uint64) Instance {
	return Instance{Replica: NodeID(slot & 0xff), Num: slot >> 20}
}

// EPaxosKind says which step of EPaxos a message takes.
type EPaxosKind uint8

const (
	// EPreAccept proposes a command and its dependencies at a ballot.
	EPreAccept EPaxosKind = iota + 1
	// EPreAcceptReply answers it with the replier's dependencies.
	EPreAcceptReply
	// EAccept asks a majority to accept a command and final dependencies.
	EAccept
	EAcceptReply
	// ECommit announces a command's final dependencies.
	ECommit
	// EPrepare asks for an instance's state at a higher ballot (recovery).
	EPrepare
	EPrepareReply
	// EExecuted tells the other replicas how far each row is executed
	// at the sender, so instances executed everywhere can be forgotten.
	EExecuted

	maxEPaxosKind = EExecuted
)

func (k EPaxosKind) String() string {
	switch k {
	case EPreAccept:
		return "pre-accept"
	case EPreAcceptReply:
		return "pre-accept-reply"
	case EAccept:
		return "accept"
	case EAcceptReply:
		return "accept-reply"
	case ECommit:
		return "commit"
	case EPrepare:
		return "prepare"
	case EPrepareReply:
		return "prepare-reply"
	case EExecuted:
		return "executed"
	}
	return fmt.Sprintf("epaxos(%d)", uint8(k))
}

// EStatus is how far an instance got at a replica.
type EStatus uint8

const (
	EUnknown EStatus = iota
	EPreAccepted
	EAccepted
	ECommitted
	EExecutedStatus

	maxEStatus = EExecutedStatus
)

func (s EStatus) String() string {
	switch s {
	case EUnknown:
		return "unknown"
	case EPreAccepted:
		return "pre-accepted"
	case EAccepted:
		return "accepted"
	case ECommitted:
		return "committed"
	case EExecutedStatus:
		return "executed"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// Command is what an EPaxos instance orders: a batch of client requests,
// or nothing (Noop) when recovery found no replica that knew it.
type Command struct {
	Noop bool
	Ops  []Op
	// AckedBelow holds, for each of Ops, its request's AckedBelow.
	AckedBelow []uint64
	// Overwrites holds, for each of Ops (nil: none for any), the seqs of
	// its session's earlier weak writes of its key that it overwrites
	// (EPaxos-HO): the writes its replica held unexecuted in other
	// instances when it proposed this one. Executing the op counts them as
	// applied where they have not been, so a copy of one that comes later
	// cannot take effect after it.
	Overwrites [][]uint64
}

// OverwritesOf returns what Overwrites holds for the i-th op.
func (c *Command) OverwritesOf(i int) []uint64 {
	if i < len(c.Overwrites) {
		return c.Overwrites[i]
	}
	return nil
}

// EPaxos is one message of the EPaxos protocol between replicas; which
// fields matter depends on Kind.
type EPaxos struct {
	Kind     EPaxosKind
	Instance Instance
	// Ballot is the ballot the message is sent at or answers.
	Ballot uint64
	// Ok: a reply accepted the ballot. A refusal carries the ballot the
	// replier promised in Promised.
	Ok       bool
	Promised uint64
	// Status, AcceptedBallot and Agreed describe the replier's state in a
	// prepare reply; Agreed also answers a pre-accept at the initial
	// ballot: the replier added no dependency to the command leader's.
	Status         EStatus
	AcceptedBallot uint64
	Agreed         bool
	Command        Command
	Deps           []Instance
	// Executed holds, in an EExecuted message, for each replica in order
	// of ID, the number up to which its row is executed at the sender.
	Executed []uint64
}

// Type implements Message.
func (*EPaxos) Type() Type { return TypeEPaxos }

const (
	epaxosOk = 1 << iota
	epaxosAgreed
	epaxosNoop
)

func (m *EPaxos) appendPayload(b []byte) []byte {
	b = append(b, byte(m.Kind), byte(m.Status))
	var flags byte
	if m.Ok {
		flags |= epaxosOk
	}
	if m.Agreed {
		flags |= epaxosAgreed
	}
	if m.Command.Noop {
		flags |= epaxosNoop
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(m.Instance.Replica))
	b = binary.AppendUvarint(b, m.Instance.Num)
	b = binary.AppendUvarint(b, m.Ballot)
	b = binary.AppendUvarint(b, m.Promised)
	b = binary.AppendUvarint(b, m.AcceptedBallot)
	b = AppendCommand(b, &m.Command)
	b = AppendInstances(b, m.Deps)
	b = binary.AppendUvarint(b, uint64(len(m.Executed)))
	for _, e := range m.Executed {
		b = binary.AppendUvarint(b, e)
	}
	return b
}

func (m *EPaxos) decode(d *decoder) {
	m.Kind = EPaxosKind(d.byte())
	m.Status = EStatus(d.byte())
	flags := d.byte()
	if d.err == nil && (m.Kind == 0 || m.Kind > maxEPaxosKind || m.Status > maxEStatus || flags > epaxosOk|epaxosAgreed|epaxosNoop) {
		d.fail(fmt.Errorf("wire: bad epaxos kind %d, status %d or flags %#x", m.Kind, m.Status, flags))
		return
	}
	m.Ok, m.Agreed, m.Command.Noop = flags&epaxosOk != 0, flags&epaxosAgreed != 0, flags&epaxosNoop != 0
	m.Instance = Instance{Replica: NodeID(d.uvarint()), Num: d.uvarint()}
	m.Ballot = d.uvarint()
	m.Promised = d.uvarint()
	m.AcceptedBallot = d.uvarint()
	d.command(&m.Command)
	m.Deps = d.instances()
	if n := d.count(1); n > 0 {
		m.Executed = make([]uint64, n)
		for i := range m.Executed {
			m.Executed[i] = d.uvarint()
		}
	}
}

// AppendCommand appends a command's ops with their AckedBelow and
// Overwrites (not its Noop flag, which the message or record carrying it
// holds). An overwritten write's seq goes as its distance below the op's.
func AppendCommand(b []byte, c *Command) []byte {
	b = binary.AppendUvarint(b, uint64(len(c.Ops)))
	for i := range c.Ops {
		b = appendOp(b, &c.Ops[i])
		var acked uint64
		if i < len(c.AckedBelow) {
			acked = c.AckedBelow[i]
		}
		b = binary.AppendUvarint(b, acked)
		over := c.OverwritesOf(i)
		b = binary.AppendUvarint(b, uint64(len(over)))
		for _, seq := range over {
			b = binary.AppendUvarint(b, c.Ops[i].ID.Seq-seq)
		}
	}
	return b
}

// AppendInstances appends a list of instances.
func AppendInstances(b []byte, is []Instance) []byte {
	b = binary.AppendUvarint(b, uint64(len(is)))
	for _, i := range is {
		b = binary.AppendUvarint(b, uint64(i.Replica))
		b = binary.AppendUvarint(b, i.Num)
	}
	return b
}

func (d *decoder) command(c *Command) {
	// An encoded op takes at least 6 bytes, its AckedBelow and the count
	// of its Overwrites one more each.
	if n := d.count(8); n > 0 {
		c.Ops = make([]Op, n)
		c.AckedBelow = make([]uint64, n)
		for i := range c.Ops {
			d.op(&c.Ops[i])
			c.AckedBelow[i] = d.uvarint()
			if m := d.count(1); m > 0 {
				if c.Overwrites == nil {
					c.Overwrites = make([][]uint64, n)
				}
				over := make([]uint64, m)
				for j := range over {
					over[j] = c.Ops[i].ID.Seq - d.uvarint()
				}
				c.Overwrites[i] = over
			}
		}
	}
}

func (d *decoder) instances() []Instance {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	is := make([]Instance, n)
	for i := range is {
		is[i] = Instance{Replica: NodeID(d.uvarint()), Num: d.uvarint()}
	}
	return is
}

// Reader decodes a record a program wrote with the Append functions
// above (an EPaxos replica's durable records); its first error sticks.
type Reader struct{ d decoder }

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{d: decoder{buf: b}} }

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 { return r.d.uvarint() }

// Byte reads a byte.
func (r *Reader) Byte() byte { return r.d.byte() }

// Command reads what AppendCommand wrote.
func (r *Reader) Command(c *Command) { r.d.command(c) }

// Instances reads what AppendInstances wrote.
func (r *Reader) Instances() []Instance { return r.d.instances() }

// Bytes reads a length-prefixed byte string, copied.
func (r *Reader) Bytes() []byte { return r.d.bytes() }

// Err reports the first error, or trailing bytes when the caller says it
// is done (end).
func (r *Reader) Err(end bool) error {
	if r.d.err == nil && end && len(r.d.buf) != 0 {
		return fmt.Errorf("wire: %d trailing bytes", len(r.d.buf))
	}
	return r.d.err
}

// AppendLenBytes appends a length-prefixed byte string.
func AppendLenBytes(b, v []byte) []byte { return appendBytes(b, v) }
