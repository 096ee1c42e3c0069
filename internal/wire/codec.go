package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// MaxFrame bounds a frame's payload; a longer length prefix is treated as
// garbage rather than trusted with an allocation. It leaves room for a raft
// snapshot of a large store, the biggest message there is.
const MaxFrame = 256 << 20

// FrameHeader is the size of a frame's length prefix.
const FrameHeader = 4

// ErrTruncated reports input that ended inside a message.
var ErrTruncated = errors.New("wire: truncated message")

// AppendFrame appends m as one frame (length prefix and payload) to b. It
// panics if the payload exceeds MaxFrame: the receiver would drop the
// connection over it, so sending such a message is a bug in the sender.
func AppendFrame(b []byte, m Message) []byte { return appendFrame(b, m, MaxFrame) }

// appendFrame is AppendFrame with the size limit as a parameter, so tests
// can reach the limit without building a message of MaxFrame bytes.
func appendFrame(b []byte, m Message, limit int) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = Append(b, m)
	n := len(b) - start - FrameHeader
	if n > limit {
		panic(fmt.Sprintf("wire: %v message of %d bytes exceeds the %d-byte frame limit", m.Type(), n, limit))
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(n))
	return b
}

// FrameLen reads a frame header, the first FrameHeader bytes of hdr, and
// returns the payload length that follows.
func FrameLen(hdr []byte) (int, error) {
	if len(hdr) < FrameHeader {
		return 0, fmt.Errorf("wire: frame header of %d bytes, want %d", len(hdr), FrameHeader)
	}
	n := binary.LittleEndian.Uint32(hdr)
	if n == 0 || n > MaxFrame {
		return 0, fmt.Errorf("wire: bad frame length %d", n)
	}
	return int(n), nil
}

// Append appends m's encoding (type byte and payload) to b. A [Raft]
// message must have its Type set: raft never sends one without, so Decode
// refuses it.
func Append(b []byte, m Message) []byte {
	b = append(b, byte(m.Type()))
	return m.appendPayload(b)
}

// Decode decodes one message. The result never aliases b.
func Decode(b []byte) (Message, error) {
	if len(b) == 0 {
		return nil, ErrTruncated
	}
	d := decoder{buf: b[1:]}
	var m Message
	switch Type(b[0]) {
	case TypeHello:
		h := new(Hello)
		h.decode(&d)
		m = h
	case TypeRaft:
		m = decodeRaft(&d)
	case TypeRequest:
		r := new(Request)
		r.decode(&d)
		m = r
	case TypeReply:
		r := new(Reply)
		r.decode(&d)
		m = r
	case TypeRecover:
		r := new(Recover)
		r.Term = d.uvarint()
		m = r
	case TypeRecoverReply:
		r := new(RecoverReply)
		r.decode(&d)
		m = r
	case TypeWitnessSync:
		m = &WitnessSync{Incarnation: d.uvarint(), Complete: d.bool()}
	case TypeWitnessSyncReply:
		m = &WitnessSyncReply{Term: d.uvarint(), Incarnation: d.uvarint()}
	case TypeClock:
		m = &Clock{Now: d.uvarint(), ExpireAfter: d.uvarint()}
	case TypeEPaxos:
		e := new(EPaxos)
		e.decode(&d)
		m = e
	case TypeStaleRecord:
		s := new(StaleRecord)
		d.op(&s.Op)
		s.PrevWeak, s.PooledAt = d.uvarint(), d.uvarint()
		m = s
	default:
		return nil, fmt.Errorf("wire: unknown message type %d", b[0])
	}
	if d.err != nil {
		return nil, fmt.Errorf("wire: decoding %v: %w", Type(b[0]), d.err)
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("wire: %d trailing bytes after %v", len(d.buf), Type(b[0]))
	}
	return m, nil
}

// decoder reads primitives from buf; the first error sticks and later reads
// return zero values, so message decoders stay linear.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.buf = nil
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail(ErrTruncated)
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.buf) == 0 {
		d.fail(ErrTruncated)
		return 0
	}
	c := d.buf[0]
	d.buf = d.buf[1:]
	return c
}

// count reads a collection length and rejects one that cannot fit in the
// remaining input, given each element takes at least minSize bytes.
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.buf)/minSize) {
		d.fail(fmt.Errorf("wire: count %d exceeds input", n))
		return 0
	}
	return int(n)
}

// bytes returns a copy of a length-prefixed byte string (nil when empty).
func (d *decoder) bytes() []byte {
	v := d.bytesAlias()
	if len(v) == 0 {
		return nil
	}
	return append([]byte(nil), v...)
}

// bytesAlias returns a length-prefixed byte string aliasing the input. Its
// capacity ends with it, so appending to one field cannot overwrite the next.
// An empty string comes back empty but non-nil.
func (d *decoder) bytesAlias() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.buf)) {
		d.fail(ErrTruncated)
		return nil
	}
	v := d.buf[:n:n]
	d.buf = d.buf[n:]
	return v
}

// string returns a length-prefixed byte string as a string: one copy, the
// conversion's, and none for the empty string.
func (d *decoder) string() string {
	return string(d.bytesAlias())
}

func appendString(b []byte, v string) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendOpID(b []byte, id OpID) []byte {
	b = binary.AppendUvarint(b, id.Session)
	return binary.AppendUvarint(b, id.Seq)
}

func (d *decoder) opID() OpID {
	return OpID{Session: d.uvarint(), Seq: d.uvarint()}
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail(errors.New("wire: bad bool"))
	return false
}

func (c *Clock) appendPayload(b []byte) []byte {
	b = binary.AppendUvarint(b, c.Now)
	return binary.AppendUvarint(b, c.ExpireAfter)
}

func (h *Hello) appendPayload(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(h.From))
	return binary.AppendUvarint(b, uint64(h.Site))
}

func (h *Hello) decode(d *decoder) {
	h.From = NodeID(d.uvarint())
	site := d.uvarint()
	if site > math.MaxUint32 {
		d.fail(fmt.Errorf("wire: site %d out of range", site))
	}
	h.Site = uint32(site)
}

func appendOp(b []byte, o *Op) []byte {
	b = appendOpID(b, o.ID)
	b = append(b, byte(o.Level), byte(o.Kind))
	b = appendString(b, o.Key)
	return appendBytes(b, o.Value)
}

func (d *decoder) op(o *Op) {
	o.ID = d.opID()
	o.Level = Level(d.byte())
	o.Kind = OpKind(d.byte())
	if d.err == nil && (o.Level > Weak || !o.Kind.Valid()) {
		d.fail(fmt.Errorf("wire: bad level %d or kind %d", o.Level, o.Kind))
	}
	o.Key = d.string()
	o.Value = d.bytes()
}

// AppendOp appends the encoding of an operation alone, as the log stores it.
func AppendOp(b []byte, o *Op) []byte { return appendOp(b, o) }

// DecodeOp decodes an operation encoded by AppendOp. Value is copied.
func DecodeOp(b []byte, o *Op) error {
	d := decoder{buf: b}
	d.op(o)
	if d.err == nil && len(d.buf) != 0 {
		d.err = fmt.Errorf("wire: %d trailing bytes after op", len(d.buf))
	}
	return d.err
}

func (r *Request) appendPayload(b []byte) []byte {
	b = appendOp(b, &r.Op)
	b = binary.AppendUvarint(b, r.AckedBelow)
	b = binary.AppendUvarint(b, r.PrevWeak)
	b = binary.AppendUvarint(b, r.MinApplied)
	b = binary.AppendUvarint(b, r.SpecFloor.Term)
	b = binary.AppendUvarint(b, r.SpecFloor.Index)
	b = binary.AppendUvarint(b, uint64(len(r.ReadAfter)))
	for _, id := range r.ReadAfter {
		b = appendOpID(b, id)
	}
	// After and Writes only when present, marked in the flags byte, so
	// that the requests other protocols log keep their encoding.
	f := r.Flags
	if len(r.After) > 0 {
		f |= flagAfter
	}
	if len(r.Writes) > 0 {
		f |= flagWrites
	}
	b = append(b, byte(f))
	if len(r.After) > 0 {
		b = AppendInstances(b, r.After)
	}
	if len(r.Writes) > 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Writes)))
		for i := range r.Writes {
			b = appendOp(b, &r.Writes[i])
			var at uint64
			if i < len(r.WriteSlots) {
				at = r.WriteSlots[i]
			}
			b = binary.AppendUvarint(b, at)
		}
	}
	if r.Flags&FlagReissue != 0 {
		b = binary.AppendUvarint(b, r.AckedAt)
	}
	return b
}

// flagAfter and flagWrites mark, on the wire only, a request followed by
// its After and by its Writes.
const (
	flagAfter  RequestFlags = 1 << 6
	flagWrites RequestFlags = 1 << 5
)

// Every flag a request may carry lies below the wire-only marks: a new
// flag that reached them would fail to compile here.
const _ = flagWrites - knownRequestFlags - 1

func (r *Request) decode(d *decoder) {
	d.op(&r.Op)
	r.AckedBelow = d.uvarint()
	r.PrevWeak = d.uvarint()
	r.MinApplied = d.uvarint()
	r.SpecFloor.Term = d.uvarint()
	r.SpecFloor.Index = d.uvarint()
	if n := d.count(2); n > 0 {
		r.ReadAfter = make([]OpID, n)
		for i := range r.ReadAfter {
			r.ReadAfter[i] = d.opID()
		}
	}
	r.Flags = RequestFlags(d.byte())
	if r.Flags&flagAfter != 0 {
		r.Flags &^= flagAfter
		if r.After = d.instances(); d.err == nil && len(r.After) == 0 {
			d.fail(fmt.Errorf("wire: a request's instance list marked present and empty"))
		}
	}
	if r.Flags&flagWrites != 0 {
		r.Flags &^= flagWrites
		// An encoded op takes at least 6 bytes, and its slot one more.
		n := d.count(7)
		if d.err == nil && n == 0 {
			d.fail(fmt.Errorf("wire: a request's writes marked present and empty"))
		}
		if n > 0 {
			r.Writes = make([]Op, n)
			for i := range r.Writes {
				d.op(&r.Writes[i])
				if at := d.uvarint(); at != 0 {
					if r.WriteSlots == nil {
						r.WriteSlots = make([]uint64, n)
					}
					r.WriteSlots[i] = at
				}
			}
		}
	}
	if r.Flags&FlagReissue != 0 {
		r.AckedAt = d.uvarint()
	}
	if r.Flags&^knownRequestFlags != 0 {
		// A flag this version does not know would be dropped silently, and
		// a re-encoding would differ from what the sender meant.
		d.fail(fmt.Errorf("wire: bad request flags %#x", r.Flags))
	}
}

const (
	replyOk = 1 << iota
	replyFound
	replyRevision
)

func (r *Reply) appendPayload(b []byte) []byte {
	var flags byte
	if r.Ok {
		flags |= replyOk
	}
	if r.Found {
		flags |= replyFound
	}
	if r.Revision != (Revision{}) {
		flags |= replyRevision
	}
	b = append(b, byte(r.Kind), flags)
	b = appendOpID(b, r.ID)
	b = binary.AppendUvarint(b, r.Term)
	b = binary.AppendUvarint(b, uint64(r.Leader))
	b = appendBytes(b, r.Value)
	b = binary.AppendUvarint(b, r.Slot)
	b = binary.AppendUvarint(b, r.Applied)
	b = appendUvarintList(b, r.Deps)
	b = binary.AppendUvarint(b, r.DepsApplied)
	b = appendOpID(b, r.ReadDep)
	b = binary.AppendUvarint(b, r.Incarnation)
	b = binary.AppendUvarint(b, uint64(len(r.Witnesses)))
	for _, w := range r.Witnesses {
		b = binary.AppendUvarint(b, uint64(w.ID))
		b = binary.AppendUvarint(b, w.Incarnation)
	}
	if r.Revision != (Revision{}) {
		b = binary.AppendUvarint(b, r.Revision.Mod)
		b = binary.AppendUvarint(b, r.Revision.Create)
		b = binary.AppendUvarint(b, r.Revision.Version)
	}
	return b
}

func (r *Reply) decode(d *decoder) {
	r.Kind = ReplyKind(d.byte())
	if d.err == nil && (r.Kind < ReplySpeculative || r.Kind > ReplyNotLeader) {
		d.fail(fmt.Errorf("wire: bad reply kind %d", r.Kind))
	}
	flags := d.byte()
	if flags&^(replyOk|replyFound|replyRevision) != 0 {
		d.fail(fmt.Errorf("wire: bad reply flags %#x", flags))
	}
	r.Ok = flags&replyOk != 0
	r.Found = flags&replyFound != 0
	r.ID = d.opID()
	r.Term = d.uvarint()
	r.Leader = NodeID(d.uvarint())
	r.Value = d.bytes()
	r.Slot = d.uvarint()
	r.Applied = d.uvarint()
	if n := d.count(1); n > 0 {
		r.Deps = make([]uint64, n)
		for i := range r.Deps {
			r.Deps[i] = d.uvarint()
		}
	}
	r.DepsApplied = d.uvarint()
	r.ReadDep = d.opID()
	r.Incarnation = d.uvarint()
	if n := d.count(2); n > 0 {
		r.Witnesses = make([]Witness, n)
		for i := range r.Witnesses {
			r.Witnesses[i] = Witness{ID: NodeID(d.uvarint()), Incarnation: d.uvarint()}
		}
	}
	if flags&replyRevision != 0 {
		r.Revision = Revision{Mod: d.uvarint(), Create: d.uvarint(), Version: d.uvarint()}
		if d.err == nil && r.Revision == (Revision{}) {
			d.fail(fmt.Errorf("wire: a reply's revision flag with no revision"))
		}
	}
}

func (r *Recover) appendPayload(b []byte) []byte {
	return binary.AppendUvarint(b, r.Term)
}

func (r *RecoverReply) appendPayload(b []byte) []byte {
	b = binary.AppendUvarint(b, r.Term)
	b = binary.AppendUvarint(b, uint64(len(r.Ops)))
	for i := range r.Ops {
		b = appendOp(b, &r.Ops[i])
	}
	b = appendUvarintList(b, r.PrevWeak)
	b = binary.AppendUvarint(b, r.Incarnation)
	b = appendBool(b, r.Complete)
	return appendUvarintList(b, r.PooledAt)
}

// appendUvarintList appends a list of numbers, its length first.
func appendUvarintList(b []byte, vs []uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(vs)))
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

func (s *StaleRecord) appendPayload(b []byte) []byte {
	b = appendOp(b, &s.Op)
	b = binary.AppendUvarint(b, s.PrevWeak)
	return binary.AppendUvarint(b, s.PooledAt)
}

func (s *WitnessSync) appendPayload(b []byte) []byte {
	b = binary.AppendUvarint(b, s.Incarnation)
	return appendBool(b, s.Complete)
}

func (s *WitnessSyncReply) appendPayload(b []byte) []byte {
	b = binary.AppendUvarint(b, s.Term)
	return binary.AppendUvarint(b, s.Incarnation)
}

func (r *RecoverReply) decode(d *decoder) {
	r.Term = d.uvarint()
	// An encoded op takes at least 6 bytes: ID, level, kind, and the key's
	// and the value's lengths.
	if n := d.count(6); n > 0 {
		r.Ops = make([]Op, n)
		for i := range r.Ops {
			d.op(&r.Ops[i])
		}
	}
	r.PrevWeak = d.perOp(len(r.Ops), "previous weak writes")
	r.Incarnation = d.uvarint()
	r.Complete = d.bool()
	r.PooledAt = d.perOp(len(r.Ops), "pooled-at clocks")
}

// perOp decodes a list that is either empty (nil) or holds one number for
// each of ops operations; what names its numbers in the error otherwise.
func (d *decoder) perOp(ops int, what string) []uint64 {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	if n != ops {
		d.fail(fmt.Errorf("wire: %d %s for %d ops", n, what, ops))
		return nil
	}
	vs := make([]uint64, n)
	for i := range vs {
		vs[i] = d.uvarint()
	}
	return vs
}
