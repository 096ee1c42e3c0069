package wire

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// FuzzDecode feeds arbitrary bytes to Decode. It must never panic, and
// whatever it accepts must not alias the input, must survive an
// encode-decode round trip unchanged and must encode to the same bytes again.
func FuzzDecode(f *testing.F) {
	addSeeds(f, decodeSeeds())
	f.Fuzz(func(t *testing.T, data []byte) {
		in := append([]byte(nil), data...)
		m, err := Decode(in)
		if err != nil {
			if m != nil {
				t.Fatalf("Decode returned a message with error %v", err)
			}
			return
		}
		enc := Append(nil, m)
		for i := range in {
			in[i] ^= 0xff
		}
		if again := Append(nil, m); !bytes.Equal(again, enc) {
			t.Fatalf("decoded message changed with its input: %x, was %x", again, enc)
		}
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", describe(m), err)
		}
		if !equalMessage(m, got) {
			t.Fatalf("round trip\n got %s\nwant %s", describe(got), describe(m))
		}
		if again := Append(nil, got); !bytes.Equal(again, enc) {
			t.Fatalf("encoding not stable\n got %x\nwant %x", again, enc)
		}
		frame := AppendFrame(nil, m)
		if n, err := FrameLen(frame); err != nil || n != len(frame)-FrameHeader || !bytes.Equal(frame[FrameHeader:], enc) {
			t.Fatalf("AppendFrame: length %d (%v), payload %x, want %x", n, err, frame[FrameHeader:], enc)
		}
	})
}

func FuzzRoundTripRequest(f *testing.F) {
	addSeeds(f, requestSeeds())
	f.Fuzz(func(t *testing.T, session, seq uint64, level, kind byte, key string,
		value []byte, ackedBelow, prevWeak, minApplied, specTerm, specIndex, afterSession, afterSeq uint64, flags byte) {
		m := &Request{
			Op: Op{ID: OpID{Session: session, Seq: seq}, Level: Level(level), Kind: OpKind(kind),
				Key: key, Value: value},
			AckedBelow: ackedBelow, PrevWeak: prevWeak, MinApplied: minApplied,
			SpecFloor: Position{Term: specTerm, Index: specIndex}, Flags: RequestFlags(flags),
		}
		if afterSession != 0 || afterSeq != 0 {
			m.ReadAfter = []OpID{{Session: afterSession, Seq: afterSeq}}
		}
		checkRoundTrip(t, m, expectIf(Level(level) > Weak || !OpKind(kind).Valid() ||
			RequestFlags(flags)&^knownRequestFlags != 0))
	})
}

func FuzzRoundTripReply(f *testing.F) {
	addSeeds(f, replySeeds())
	f.Fuzz(func(t *testing.T, kind byte, ok, found bool, session, seq, term, leader uint64,
		value []byte, slot, applied uint64, deps []byte, readSession, readSeq uint64) {
		m := &Reply{
			Kind: ReplyKind(kind), ID: OpID{Session: session, Seq: seq}, Term: term,
			Leader: NodeID(leader), Ok: ok, Found: found, Value: value, Slot: slot,
			Applied: applied, Deps: uvarints(deps), ReadDep: OpID{Session: readSession, Seq: readSeq},
		}
		checkRoundTrip(t, m, expectIf(ReplyKind(kind) < ReplySpeculative || ReplyKind(kind) > ReplyNotLeader))
	})
}

// FuzzRaftMessage builds raft messages from fuzzed fields, any subset of them
// present, and checks they come back proto.Equal.
func FuzzRaftMessage(f *testing.F) {
	addSeeds(f, raftSeeds())
	f.Fuzz(func(t *testing.T, present uint64, typ byte, to, from, term, logTerm, index,
		commit, vote, rejectHint uint64, reject bool, context, entries, snapData, snapMeta []byte) {
		m, valid := buildRaft(present, typ, to, from, term, logTerm, index, commit, vote,
			rejectHint, reject, context, entries, snapData, snapMeta)
		checkRoundTrip(t, &Raft{M: m}, expectIf(!valid))
	})
}

// expect is what checkRoundTrip requires of decoding.
type expect int

const (
	mustDecode expect = iota // decode to an equal message
	mustFail                 // the message holds values the decoder refuses
)

func expectIf(invalid bool) expect {
	if invalid {
		return mustFail
	}
	return mustDecode
}

// checkRoundTrip encodes m, alone and as a frame after other bytes, and
// decodes it, checking the result against want.
func checkRoundTrip(t *testing.T, m Message, want expect) {
	t.Helper()
	buf := AppendFrame([]byte{0xaa, 0xbb}, m)
	n, err := FrameLen(buf[2 : 2+FrameHeader])
	if err != nil || n != len(buf)-2-FrameHeader {
		t.Fatalf("FrameLen = %d, %v for a %d-byte frame", n, err, len(buf))
	}
	enc := buf[2+FrameHeader:]
	if plain := Append(nil, m); !bytes.Equal(plain, enc) {
		t.Fatalf("AppendFrame payload %x differs from Append %x", enc, plain)
	}
	got, err := Decode(enc)
	switch {
	case want == mustFail && err == nil:
		t.Fatalf("Decode accepted %s as %s", describe(m), describe(got))
	case want == mustFail:
		return
	case err != nil:
		t.Fatalf("Decode(%s): %v", describe(m), err)
	case !equalMessage(m, got):
		t.Fatalf("round trip\n got %s\nwant %s", describe(got), describe(m))
	}
}

// takeUvarint reads one uvarint from b; malformed input yields its first
// byte, so every input makes progress.
func takeUvarint(b []byte) (uint64, []byte) {
	if len(b) == 0 {
		return 0, b
	}
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return uint64(b[0]), b[1:]
	}
	return v, b[n:]
}

func uvarints(b []byte) []uint64 {
	var vs []uint64
	for len(b) > 0 {
		var v uint64
		v, b = takeUvarint(b)
		vs = append(vs, v)
	}
	return vs
}

func appendUvarints(b []byte, vs []uint64) []byte {
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// Bits of FuzzRaftMessage's present argument.
const (
	fzType = 1 << iota
	fzTo
	fzFrom
	fzTerm
	fzLogTerm
	fzIndex
	fzCommit
	fzVote
	fzReject
	fzRejectHint
	fzSnapshot
	fzSnapData
	fzSnapMeta
	fzSnapIndex
	fzSnapTerm
	fzConfState
	fzContext
)

// Bits of an entry's header byte in FuzzRaftMessage's entries argument; the
// two blank bits, 3-4, hold the entry type.
const (
	fzEntTerm = 1 << iota
	fzEntIndex
	fzEntType
	_
	_
	fzEntData
)

// maxFuzzEntries keeps one fuzz input from describing a huge message.
const maxFuzzEntries = 256

// buildRaft turns fuzz arguments into a raft message and reports whether the
// decoder should accept it. Entries are a sequence of: header byte, term,
// index, data length (uvarints), data. Snapshot metadata is uvarints: index,
// term, voter count, voters, learners. Context and entry Data are present,
// possibly empty, when their presence bits say so, and nil otherwise.
func buildRaft(present uint64, typ byte, to, from, term, logTerm, index, commit, vote,
	rejectHint uint64, reject bool, context, entries, snapData, snapMeta []byte) (*raftpb.Message, bool) {
	m := &raftpb.Message{}
	opt := func(bit uint64, v uint64) *uint64 {
		if present&bit != 0 {
			return &v
		}
		return nil
	}
	mt := raftpb.MessageType(typ)
	if present&fzType != 0 {
		m.Type = &mt
	}
	m.To = opt(fzTo, to)
	m.From = opt(fzFrom, from)
	m.Term = opt(fzTerm, term)
	m.LogTerm = opt(fzLogTerm, logTerm)
	m.Index = opt(fzIndex, index)
	m.Commit = opt(fzCommit, commit)
	m.Vote = opt(fzVote, vote)
	m.RejectHint = opt(fzRejectHint, rejectHint)
	if present&fzReject != 0 {
		m.Reject = &reject
	}
	if present&fzContext != 0 {
		m.Context = append([]byte{}, context...)
	}
	valid := m.Type != nil && m.GetType() <= raftpb.MessageType_MsgForgetLeader &&
		!raft.IsLocalMsg(m.GetType())
	for b := entries; len(b) > 0 && len(m.Entries) < maxFuzzEntries; {
		h := b[0]
		var et, ei, n uint64
		et, b = takeUvarint(b[1:])
		ei, b = takeUvarint(b)
		n, b = takeUvarint(b)
		n = min(n, uint64(len(b)))
		e := &raftpb.Entry{}
		if h&fzEntTerm != 0 {
			e.Term = &et
		}
		if h&fzEntIndex != 0 {
			e.Index = &ei
		}
		if h&fzEntType != 0 {
			t := raftpb.EntryType(h >> 3 & 3)
			e.Type = &t
			valid = valid && t <= raftpb.EntryType_EntryConfChangeV2
		}
		if h&fzEntData != 0 {
			e.Data = append([]byte{}, b[:n]...)
		}
		b = b[n:]
		m.Entries = append(m.Entries, e)
	}
	if present&fzSnapshot != 0 {
		s := &raftpb.Snapshot{}
		if present&fzSnapData != 0 {
			// Snapshots travel as protobuf, which keeps an empty Data present.
			s.Data = append([]byte{}, snapData...)
		}
		if present&fzSnapMeta != 0 {
			vs := uvarints(snapMeta)
			next := func() uint64 {
				if len(vs) == 0 {
					return 0
				}
				v := vs[0]
				vs = vs[1:]
				return v
			}
			s.Metadata = &raftpb.SnapshotMetadata{}
			s.Metadata.Index = opt(fzSnapIndex, next())
			s.Metadata.Term = opt(fzSnapTerm, next())
			if present&fzConfState != 0 {
				nv := min(next(), uint64(len(vs)))
				s.Metadata.ConfState = &raftpb.ConfState{Voters: vs[:nv:nv], Learners: vs[nv:]}
			}
		}
		m.Snapshot = s
	}
	return m, valid
}

// raftFuzzArgs is the inverse of buildRaft, for seeding FuzzRaftMessage with
// real messages.
func raftFuzzArgs(m *raftpb.Message) []any {
	var present uint64
	set := func(ok bool, bit uint64) {
		if ok {
			present |= bit
		}
	}
	set(m.Type != nil, fzType)
	set(m.To != nil, fzTo)
	set(m.From != nil, fzFrom)
	set(m.Term != nil, fzTerm)
	set(m.LogTerm != nil, fzLogTerm)
	set(m.Index != nil, fzIndex)
	set(m.Commit != nil, fzCommit)
	set(m.Vote != nil, fzVote)
	set(m.Reject != nil, fzReject)
	set(m.RejectHint != nil, fzRejectHint)
	set(m.Context != nil, fzContext)
	var ents []byte
	for _, e := range m.Entries {
		h := byte(e.GetType()) << 3
		if e.Term != nil {
			h |= fzEntTerm
		}
		if e.Index != nil {
			h |= fzEntIndex
		}
		if e.Type != nil {
			h |= fzEntType
		}
		if e.Data != nil {
			h |= fzEntData
		}
		ents = append(ents, h)
		ents = appendUvarints(ents, []uint64{e.GetTerm(), e.GetIndex(), uint64(len(e.Data))})
		ents = append(ents, e.Data...)
	}
	var snapData, snapMeta []byte
	if s := m.Snapshot; s != nil {
		present |= fzSnapshot
		if s.Data != nil {
			present |= fzSnapData
			snapData = s.Data
		}
		if md := s.Metadata; md != nil {
			present |= fzSnapMeta
			set(md.Index != nil, fzSnapIndex)
			set(md.Term != nil, fzSnapTerm)
			snapMeta = appendUvarints(nil, []uint64{md.GetIndex(), md.GetTerm()})
			if cs := md.ConfState; cs != nil {
				present |= fzConfState
				snapMeta = binary.AppendUvarint(snapMeta, uint64(len(cs.Voters)))
				snapMeta = appendUvarints(snapMeta, cs.Voters)
				snapMeta = appendUvarints(snapMeta, cs.Learners)
			}
		}
	}
	return []any{present, byte(m.GetType()), m.GetTo(), m.GetFrom(), m.GetTerm(), m.GetLogTerm(),
		m.GetIndex(), m.GetCommit(), m.GetVote(), m.GetRejectHint(), m.GetReject(),
		m.Context, ents, snapData, snapMeta}
}

func addSeeds(f *testing.F, seeds []fuzzSeed) {
	for _, s := range seeds {
		f.Add(s.args...)
	}
}

// fuzzSeed is one named seed input of a fuzz test.
type fuzzSeed struct {
	name string
	args []any
}

func decodeSeeds() []fuzzSeed {
	var seeds []fuzzSeed
	for _, s := range samples() {
		seeds = append(seeds, fuzzSeed{s.name, []any{Append(nil, s.msg)}})
	}
	return append(seeds,
		fuzzSeed{"empty", []any{[]byte{}}},
		fuzzSeed{"bad-type", []any{[]byte{0xff, 1, 2, 3}}},
	)
}

func requestSeeds() []fuzzSeed {
	var seeds []fuzzSeed
	for _, s := range samples() {
		if r, ok := s.msg.(*Request); ok {
			var after OpID
			if len(r.ReadAfter) > 0 {
				after = r.ReadAfter[0]
			}
			seeds = append(seeds, fuzzSeed{s.name, []any{r.Op.ID.Session, r.Op.ID.Seq,
				byte(r.Op.Level), byte(r.Op.Kind), r.Op.Key, r.Op.Value, r.AckedBelow,
				r.PrevWeak, r.MinApplied, r.SpecFloor.Term, r.SpecFloor.Index, after.Session, after.Seq, byte(r.Flags)}})
		}
	}
	return append(seeds,
		fuzzSeed{"request-bad-level", []any{uint64(1), uint64(1), byte(2),
			byte(0), "", []byte(nil), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), byte(0)}},
		fuzzSeed{"request-bad-kind", []any{uint64(1), uint64(1), byte(0),
			byte(3), "k", []byte(nil), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), byte(0)}})
}

func replySeeds() []fuzzSeed {
	var seeds []fuzzSeed
	for _, s := range samples() {
		if r, ok := s.msg.(*Reply); ok {
			seeds = append(seeds, fuzzSeed{s.name, []any{byte(r.Kind), r.Ok, r.Found,
				r.ID.Session, r.ID.Seq, r.Term, uint64(r.Leader), r.Value, r.Slot, r.Applied,
				appendUvarints(nil, r.Deps), r.ReadDep.Session, r.ReadDep.Seq}})
		}
	}
	return append(seeds, fuzzSeed{"reply-bad-kind", []any{byte(0), false, false, uint64(1),
		uint64(1), uint64(0), uint64(0), []byte(nil), uint64(0), uint64(0), []byte(nil),
		uint64(0), uint64(0)}})
}

func raftSeeds() []fuzzSeed {
	var seeds []fuzzSeed
	for _, s := range raftSamples() {
		seeds = append(seeds, fuzzSeed{s.name, raftFuzzArgs(s.msg.(*Raft).M)})
	}
	return seeds
}

// TestRaftFuzzArgs checks FuzzRaftMessage's builder against the samples, so
// the fuzzer explores messages like the ones raft sends.
func TestRaftFuzzArgs(t *testing.T) {
	for _, s := range raftSamples() {
		want := s.msg.(*Raft).M
		a := raftFuzzArgs(want)
		got, valid := buildRaft(a[0].(uint64), a[1].(byte), a[2].(uint64), a[3].(uint64),
			a[4].(uint64), a[5].(uint64), a[6].(uint64), a[7].(uint64), a[8].(uint64),
			a[9].(uint64), a[10].(bool), a[11].([]byte), a[12].([]byte), a[13].([]byte),
			a[14].([]byte))
		if !valid || !proto.Equal(got, want) {
			t.Errorf("%s: buildRaft(raftFuzzArgs(m)) = %v (valid %v), want %v", s.name, got, valid, want)
		}
	}
}

var updateCorpus = flag.Bool("update-corpus", false,
	"rewrite the seed files under testdata/fuzz from the sample messages")

// TestUpdateFuzzCorpus writes the committed seed corpus: go test
// -run=TestUpdateFuzzCorpus -update-corpus. The files are in the format the
// fuzzing engine reads, so plain go test also runs them as test cases.
func TestUpdateFuzzCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite testdata/fuzz")
	}
	for fuzzer, seeds := range map[string][]fuzzSeed{
		"FuzzDecode":           decodeSeeds(),
		"FuzzRoundTripRequest": requestSeeds(),
		"FuzzRoundTripReply":   replySeeds(),
		"FuzzRaftMessage":      raftSeeds(),
	} {
		dir := filepath.Join("testdata", "fuzz", fuzzer)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range seeds {
			if err := os.WriteFile(filepath.Join(dir, "seed-"+s.name), corpusFile(s.args), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// corpusFile encodes fuzz arguments in the "go test fuzz v1" format.
func corpusFile(args []any) []byte {
	b := []byte("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			b = fmt.Appendf(b, "[]byte(%q)\n", v)
		case byte:
			b = fmt.Appendf(b, "byte(%q)\n", v)
		case string:
			b = fmt.Appendf(b, "string(%q)\n", v)
		case uint64, bool:
			b = fmt.Appendf(b, "%T(%v)\n", v, v)
		default:
			panic(fmt.Sprintf("corpusFile: unsupported %T", a))
		}
	}
	return b
}
