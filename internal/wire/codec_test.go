package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

type sample struct {
	name string
	msg  Message
}

func u64(v uint64) *uint64 { return proto.Uint64(v) }

// opData is a raft entry payload as replicas propose it: encoded operations.
func opData(ops ...Op) []byte {
	var b []byte
	for i := range ops {
		b = AppendOp(b, &ops[i])
	}
	return b
}

func confChangeData() []byte {
	b, err := proto.Marshal(&raftpb.ConfChange{
		Type:   raftpb.ConfChangeType_ConfChangeAddNode.Enum(),
		NodeId: u64(4),
	})
	if err != nil {
		panic(err)
	}
	return b
}

// raftSamples covers the messages replicas exchange, with the field
// combinations raft produces, plus explicitly present zero values, which must
// come back present.
func raftSamples() []sample {
	normal := raftpb.EntryType_EntryNormal
	return []sample{
		{"raft-app", &Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgApp.Enum(), To: u64(2), From: u64(1), Term: u64(7),
			LogTerm: u64(6), Index: u64(41), Commit: u64(40),
			Entries: []*raftpb.Entry{
				// The empty entry a new leader appends: Data absent.
				{Term: u64(7), Index: u64(42), Type: normal.Enum()},
				{Term: u64(7), Index: u64(43), Type: normal.Enum(), Data: opData(
					Op{ID: OpID{Session: 1 << 40, Seq: 9}, Kind: Put, Key: "k12", Value: []byte("twelve")},
					Op{ID: OpID{Session: 3, Seq: 1}, Level: Weak, Kind: Put, Key: "\xff\x00\xfe", Value: bytes.Repeat([]byte{0xab}, 300)},
					Op{ID: OpID{Session: 3, Seq: 2}, Level: Weak, Kind: Delete, Key: "k12"},
				)},
				{Term: u64(7), Index: u64(44), Type: raftpb.EntryType_EntryConfChange.Enum(), Data: confChangeData()},
				{Term: u64(7), Index: u64(45), Type: raftpb.EntryType_EntryConfChangeV2.Enum(), Data: []byte{0}},
				// Type absent rather than EntryNormal: presence must survive.
				{Term: u64(7), Index: u64(46), Data: []byte("x")},
			},
		}}},
		{"raft-app-resp-reject", &Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgAppResp.Enum(), To: u64(1), From: u64(3), Term: u64(7),
			Index: u64(41), Reject: proto.Bool(true), RejectHint: u64(30), LogTerm: u64(5),
		}}},
		{"raft-app-resp-zeros", &Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgAppResp.Enum(), To: u64(0), From: u64(0), Term: u64(0),
			LogTerm: u64(0), Index: u64(0), Commit: u64(0), Vote: u64(0),
			Reject: proto.Bool(false), RejectHint: u64(0),
		}}},
		{"raft-heartbeat", &Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgHeartbeat.Enum(), To: u64(3), From: u64(1), Term: u64(7),
			Commit: u64(45), Context: []byte("read-index-ctx"),
		}}},
		{"raft-vote", &Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgVote.Enum(), To: u64(2), From: u64(3), Term: u64(8),
			LogTerm: u64(7), Index: u64(46), Context: []byte("CampaignTransfer"),
		}}},
		{"raft-prop", &Raft{M: &raftpb.Message{
			// A proposal forwarded to the leader: entries without term or index.
			Type: raftpb.MessageType_MsgProp.Enum(), To: u64(1), From: u64(2),
			Entries: []*raftpb.Entry{{Data: []byte("op")}, {Data: []byte("op2")}},
		}}},
		{"raft-snap", &Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgSnap.Enum(), To: u64(3), From: u64(1), Term: u64(9),
			Snapshot: &raftpb.Snapshot{
				Data: bytes.Repeat([]byte("state"), 1000),
				Metadata: &raftpb.SnapshotMetadata{
					ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}, Learners: []uint64{4}},
					Index:     u64(1000), Term: u64(9),
				},
			},
		}}},
		{"raft-empty-snapshot", &Raft{M: &raftpb.Message{
			// Older peers send a non-nil, empty snapshot on other messages.
			Type: raftpb.MessageType_MsgHeartbeatResp.Enum(), To: u64(1), From: u64(2),
			Term: u64(9), Snapshot: &raftpb.Snapshot{},
		}}},
		{"raft-empty-bytes", &Raft{M: &raftpb.Message{
			// Empty but present byte fields, which must not come back nil.
			Type: raftpb.MessageType_MsgApp.Enum(), To: u64(2), From: u64(1), Context: []byte{},
			Entries: []*raftpb.Entry{{Term: u64(7), Index: u64(47), Data: []byte{}}, {Data: []byte("y")}},
		}}},
		{"raft-forget-leader", &Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgForgetLeader.Enum(),
		}}},
	}
}

// samples returns one or more valid messages of every type.
func samples() []sample {
	s := []sample{
		{"hello-replica", &Hello{From: 3, Site: 2}},
		{"hello-client", &Hello{From: FirstClientID + 17, Site: 0}},
		{"hello-zero", &Hello{}},
		{"request-get", &Request{Op: Op{ID: OpID{Session: uint64(FirstClientID)<<8 | 1, Seq: 1}, Key: "99"}}},
		{"request-get-empty-key", &Request{Op: Op{ID: OpID{Session: 5, Seq: 1}, Key: ""}}},
		{"request-delete", &Request{Op: Op{ID: OpID{Session: 5, Seq: 2}, Level: Weak, Kind: Delete, Key: "user\x00\x01\xff"},
			PrevWeak: 1}},
		{"request-long-key", &Request{Op: Op{ID: OpID{Session: 5, Seq: 3}, Kind: Put, Key: strings.Repeat("key/", 300),
			Value: []byte("v")}}},
		{"request-weak-put", &Request{
			Op:         Op{ID: OpID{Session: 12, Seq: 300}, Level: Weak, Kind: Put, Key: "user000000042", Value: bytes.Repeat([]byte{'v'}, 100)},
			AckedBelow: 290, PrevWeak: 297, MinApplied: 301, SpecFloor: Position{Term: 7, Index: 305},
			ReadAfter: []OpID{{Session: 40, Seq: 2}, {Session: 41, Seq: 9}}, Flags: FlagRetry,
		}},
		{"request-max", &Request{
			Op:         Op{ID: OpID{Session: math.MaxUint64, Seq: math.MaxUint64}, Level: Weak, Kind: Delete, Key: "\xff\xff\xff\xff\xff\xff\xff\xff", Value: []byte{0}},
			AckedBelow: math.MaxUint64, PrevWeak: math.MaxUint64, MinApplied: math.MaxUint64,
			SpecFloor: Position{Term: math.MaxUint64, Index: math.MaxUint64},
			ReadAfter: []OpID{{Session: math.MaxUint64, Seq: math.MaxUint64}}, Flags: knownRequestFlags,
		}},
		{"reply-speculative", &Reply{Kind: ReplySpeculative, ID: OpID{Session: 12, Seq: 4}, Term: 3, Leader: 1,
			Ok: true, Found: true, Value: []byte("value"), Slot: 77, Applied: 70}},
		{"reply-witness-deps", &Reply{Kind: ReplyWitness, ID: OpID{Session: 12, Seq: 5}, Term: 3, Leader: 1,
			Ok: true, Deps: []uint64{1, 2, 300, math.MaxUint64}, DepsApplied: 1 << 40, ReadDep: OpID{Session: 40, Seq: 2}}},
		{"reply-sync-found-empty", &Reply{Kind: ReplySync, ID: OpID{Session: 1, Seq: 1}, Found: true, Slot: 5, Applied: 5}},
		{"reply-weak", &Reply{Kind: ReplyWeak, ID: OpID{Session: 2, Seq: 9}, Value: []byte("w"), Slot: 3, Applied: 10}},
		{"reply-not-leader", &Reply{Kind: ReplyNotLeader, ID: OpID{Session: 2, Seq: 9}, Term: 4, Leader: 3}},
		{"recover", &Recover{Term: 12}},
		{"clock", &Clock{Now: 360_123, ExpireAfter: 360_000}},
		{"clock-max", &Clock{Now: math.MaxUint64, ExpireAfter: math.MaxUint64}},
		{"recover-reply", &RecoverReply{Term: 12, Ops: []Op{
			{ID: OpID{Session: 1, Seq: 2}, Kind: Put, Key: "3", Value: []byte("v")},
			{ID: OpID{Session: 4, Seq: 5}, Level: Weak, Kind: Put, Key: ""},
			{ID: OpID{Session: 7, Seq: 8}, Kind: Get, Key: "\x00"},
			{ID: OpID{Session: 7, Seq: 9}, Kind: Delete, Key: "3"},
		}}},
		{"recover-reply-empty", &RecoverReply{Term: 1}},
		{"recover-reply-prev-weak", &RecoverReply{Term: 2, Ops: []Op{{ID: OpID{Session: 1, Seq: 3}, Level: Weak, Kind: Put, Key: "1"}, {ID: OpID{Session: 2, Seq: 1}}},
			PrevWeak: []uint64{2, 0}}},
		{"recover-reply-incarnation", &RecoverReply{Term: 3, Incarnation: math.MaxUint64, Complete: true}},
		{"recover-reply-pooled-at", &RecoverReply{Term: 4, Ops: []Op{{ID: OpID{Session: 1, Seq: 3}, Level: Weak, Kind: Put, Key: "1"}, {ID: OpID{Session: 2, Seq: 1}}},
			PooledAt: []uint64{0, math.MaxUint64}}},
		{"stale-record", &StaleRecord{Op: Op{ID: OpID{Session: 7, Seq: 4}, Level: Weak, Kind: Put, Key: "k", Value: []byte("v")},
			PrevWeak: 3, PooledAt: 1 << 33}},
		{"stale-record-zero", &StaleRecord{Op: Op{ID: OpID{Session: 7, Seq: 5}, Key: "k"}}},
		{"witness-sync", &WitnessSync{Incarnation: 1 << 63, Complete: true}},
		{"witness-sync-incomplete", &WitnessSync{Incarnation: 5}},
		{"witness-sync-reply", &WitnessSyncReply{Term: 9, Incarnation: 1 << 40}},
		{"reply-witnesses", &Reply{Kind: ReplySpeculative, ID: OpID{Session: 1, Seq: 2}, Ok: true,
			Incarnation: 77, Witnesses: []Witness{{ID: 2, Incarnation: 1 << 50}, {ID: 3, Incarnation: 1}}}},
		{"reply-revision", &Reply{Kind: ReplyWeak, ID: OpID{Session: 1, Seq: 3}, Ok: true, Found: true,
			Value: []byte("v"), Revision: Revision{Mod: 9, Create: 4, Version: 3}}},
		{"epaxos-pre-accept", &EPaxos{Kind: EPreAccept, Instance: Instance{Replica: 2, Num: 1 << 40},
			Command: Command{Ops: []Op{{ID: OpID{Session: 1, Seq: 2}, Kind: Put, Key: "k", Value: []byte("v")},
				{ID: OpID{Session: 3, Seq: 9}, Level: Weak, Key: "j"}}, AckedBelow: []uint64{2, 7}},
			Deps: []Instance{{Replica: 1, Num: 3}, {Replica: 3, Num: 1 << 50}}}},
		{"epaxos-accept-overwrites", &EPaxos{Kind: EAccept, Instance: Instance{Replica: 1, Num: 7}, Ballot: 0x101,
			Command: Command{Ops: []Op{{ID: OpID{Session: 1, Seq: 2}, Kind: Put, Key: "j"},
				{ID: OpID{Session: 3, Seq: 9}, Level: Weak, Kind: Delete, Key: "k"}}, AckedBelow: []uint64{2, 4},
				Overwrites: [][]uint64{nil, {5, 8}}}}},
		{"epaxos-pre-accept-reply", &EPaxos{Kind: EPreAcceptReply, Instance: Instance{Replica: 1, Num: 5}, Ok: true, Agreed: true,
			Deps: []Instance{{Replica: 2, Num: 4}}}},
		{"epaxos-refusal", &EPaxos{Kind: EAcceptReply, Instance: Instance{Replica: 1, Num: 5}, Ballot: 0x103, Promised: 0x205}},
		{"epaxos-prepare-reply", &EPaxos{Kind: EPrepareReply, Instance: Instance{Replica: 4, Num: 1}, Ballot: 0x101, Ok: true,
			Status: EAccepted, AcceptedBallot: 0x102, Command: Command{Noop: true}}},
		{"request-after", &Request{Op: Op{ID: OpID{Session: 4, Seq: 2}, Level: Weak, Key: "k"}, AckedBelow: 2,
			After: []Instance{{Replica: 1, Num: 9}, {Replica: 3, Num: 1 << 45}}}},
		{"request-writes", &Request{Op: Op{ID: OpID{Session: 4, Seq: 9}, Key: "k"}, AckedBelow: 3, Flags: FlagRetry,
			Writes: []Op{{ID: OpID{Session: 4, Seq: 3}, Level: Weak, Kind: Put, Key: "a", Value: []byte("v")},
				{ID: OpID{Session: 4, Seq: 5}, Level: Weak, Kind: Delete, Key: "b"}}}},
		{"epaxos-executed", &EPaxos{Kind: EExecuted, Executed: []uint64{9, 0, 1 << 33}}},
		{"request-reissue", &Request{Op: Op{ID: OpID{Session: 4, Seq: 3}, Kind: Put, Key: "a"}, AckedBelow: 5,
			Flags: FlagRetry | FlagReissue, AckedAt: Instance{Replica: 2, Num: 9}.Slot(3)}},
		{"request-write-slots", &Request{Op: Op{ID: OpID{Session: 4, Seq: 9}, Key: "k"}, AckedBelow: 3,
			Writes: []Op{{ID: OpID{Session: 4, Seq: 3}, Level: Weak, Kind: Put, Key: "a"},
				{ID: OpID{Session: 4, Seq: 5}, Level: Weak, Kind: Put, Key: "b"}},
			WriteSlots: []uint64{0, Instance{Replica: 1, Num: 1 << 30}.Slot(1)}}},
	}
	return append(s, raftSamples()...)
}

// equalMessage compares messages as the protocol sees them: raft messages
// with proto.Equal, so field presence counts; our own messages field by
// field, where an empty slice and a nil one mean the same.
func equalMessage(a, b Message) bool {
	if ra, ok := a.(*Raft); ok {
		rb, ok := b.(*Raft)
		return ok && proto.Equal(ra.M, rb.M)
	}
	return equalValue(reflect.ValueOf(a), reflect.ValueOf(b))
}

func equalValue(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValue(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.String:
		return a.String() == b.String()
	}
	panic("equalValue: unexpected kind " + a.Kind().String())
}

func describe(m Message) string {
	if r, ok := m.(*Raft); ok {
		return "raft " + r.M.String()
	}
	return fmt.Sprintf("%T%+v", m, m)
}

func TestRoundTrip(t *testing.T) {
	for _, s := range samples() {
		t.Run(s.name, func(t *testing.T) {
			enc := Append(nil, s.msg)
			if Type(enc[0]) != s.msg.Type() {
				t.Fatalf("type byte %d, want %d", enc[0], s.msg.Type())
			}
			got, err := Decode(enc)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !equalMessage(s.msg, got) {
				t.Fatalf("round trip\n got %s\nwant %s", describe(got), describe(s.msg))
			}
			// Appending after existing bytes must not disturb them, and must
			// produce the same encoding.
			prefix := []byte("prefix")
			b := Append(append([]byte(nil), prefix...), s.msg)
			if !bytes.Equal(b[:len(prefix)], prefix) || !bytes.Equal(b[len(prefix):], enc) {
				t.Fatalf("Append after a prefix gave %x, want %x%x", b, prefix, enc)
			}
			// Encoding is a function of the message: decode-encode is stable.
			if again := Append(nil, got); !bytes.Equal(again, enc) {
				t.Fatalf("re-encoding changed bytes\n got %x\nwant %x", again, enc)
			}
		})
	}
}

func TestTypeString(t *testing.T) {
	for _, s := range samples() {
		if name := s.msg.Type().String(); strings.HasPrefix(name, "type(") {
			t.Errorf("%s: type %d has no name", s.name, s.msg.Type())
		}
	}
	if Type(0).String() != "type(0)" {
		t.Errorf("Type(0) = %q", Type(0).String())
	}
}

// TestRoundTripEdgeCases covers messages at the edges of what the encoding
// represents: each must come back exactly, or, where wantErr is set, be
// refused by Decode.
func TestRoundTripEdgeCases(t *testing.T) {
	app := raftpb.MessageType_MsgApp.Enum
	tests := []struct {
		name    string
		msg     Message
		input   []byte // when msg is nil: decode this instead of msg's encoding
		wantErr string
	}{
		{name: "hello-site-2^31", msg: &Hello{From: 1, Site: 1 << 31}},
		{name: "hello-site-2^31+1", msg: &Hello{From: 1, Site: 1<<31 + 1}},
		{name: "hello-site-max", msg: &Hello{From: 1, Site: math.MaxUint32}},
		{name: "raft-context-empty-present", msg: &Raft{M: &raftpb.Message{Type: app(), Context: []byte{}}}},
		{name: "raft-context-absent", msg: &Raft{M: &raftpb.Message{Type: app(), Context: nil}}},
		{name: "raft-entry-data-empty-present", msg: &Raft{M: &raftpb.Message{Type: app(),
			Entries: []*raftpb.Entry{{Term: u64(1), Index: u64(1), Data: []byte{}}}}}},
		{name: "raft-entry-data-mixed", msg: &Raft{M: &raftpb.Message{Type: app(), Context: []byte{},
			Entries: []*raftpb.Entry{{Data: nil}, {Data: []byte{}}, {Data: []byte("d")}, {Data: []byte{}}, {}}}}},
		{name: "raft-no-type", msg: &Raft{M: &raftpb.Message{To: u64(1)}},
			wantErr: "without a type"},
		{name: "raft-untyped-from-wire",
			// Field mask without the type bit, type field 8 (MsgHeartbeat).
			input:   []byte("\x020\b00000000\x00\x0e00000000000000\x00"),
			wantErr: "without a type"},
		{name: "snapshot-data-empty-present", msg: &Raft{M: &raftpb.Message{
			Type: raftpb.MessageType_MsgSnap.Enum(), Snapshot: &raftpb.Snapshot{Data: []byte{}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.input
			if tt.msg != nil {
				in = Append(nil, tt.msg)
			}
			got, err := Decode(in)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Decode(%x) = %v, %v; want error containing %q", in, got, err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("Decode: %v", err)
			case !equalMessage(tt.msg, got):
				t.Fatalf("round trip\n got %s\nwant %s", describe(got), describe(tt.msg))
			}
		})
	}
}

// TestRaftEmptyBytes checks what proto.Equal alone leaves implicit: an
// empty byte field comes back non-nil and one that was nil stays nil.
func TestRaftEmptyBytes(t *testing.T) {
	in := &raftpb.Message{Type: raftpb.MessageType_MsgApp.Enum(), Context: []byte{},
		Entries: []*raftpb.Entry{{Data: []byte{}}, {}}}
	got, err := Decode(Append(nil, &Raft{M: in}))
	if err != nil {
		t.Fatal(err)
	}
	m := got.(*Raft).M
	if m.Context == nil || len(m.Context) != 0 {
		t.Errorf("Context = %#v, want empty and non-nil", m.Context)
	}
	if d := m.Entries[0].Data; d == nil || len(d) != 0 {
		t.Errorf("entry 0 Data = %#v, want empty and non-nil", d)
	}
	if d := m.Entries[1].Data; d != nil {
		t.Errorf("entry 1 Data = %#v, want nil", d)
	}
}

// TestRaftResponsesNotCarried pins that Responses, which only local storage
// messages use, is left out of the encoding rather than sent.
func TestRaftResponsesNotCarried(t *testing.T) {
	in := &raftpb.Message{Type: raftpb.MessageType_MsgApp.Enum(), To: u64(2), Term: u64(3),
		Responses: []*raftpb.Message{{Type: raftpb.MessageType_MsgAppResp.Enum(), To: u64(1)}}}
	got, err := Decode(Append(nil, &Raft{M: in}))
	if err != nil {
		t.Fatal(err)
	}
	m := got.(*Raft).M
	if m.Responses != nil {
		t.Errorf("Responses = %v, want nil", m.Responses)
	}
	want := proto.Clone(in).(*raftpb.Message)
	want.Responses = nil
	if !proto.Equal(m, want) {
		t.Errorf("got %v, want %v", m, want)
	}
}

// TestDecodedAliasesDoNotOverlap checks that appending to one decoded byte
// field cannot overwrite another that shares the decoder's payload copy.
func TestDecodedAliasesDoNotOverlap(t *testing.T) {
	in := &raftpb.Message{Type: raftpb.MessageType_MsgApp.Enum(), Context: []byte("ctx"),
		Entries: []*raftpb.Entry{{Data: []byte("one")}, {Data: []byte("two")}}}
	got, err := Decode(Append(nil, &Raft{M: in}))
	if err != nil {
		t.Fatal(err)
	}
	m := got.(*Raft).M
	_ = append(m.Context, "XXXXXXXXXXXXXXXX"...)
	_ = append(m.Entries[0].Data, "XXXXXXXXXXXXXXXX"...)
	if !proto.Equal(m, in) {
		t.Errorf("appending to decoded fields changed the message: %v", m)
	}
}

func TestDecodeDoesNotAlias(t *testing.T) {
	for _, s := range samples() {
		enc := Append(nil, s.msg)
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for i := range enc {
			enc[i] = 0xee
		}
		if !equalMessage(s.msg, got) {
			t.Errorf("%s: decoded message changed with its input", s.name)
		}
	}
}

func TestDecodeTruncated(t *testing.T) {
	for _, s := range samples() {
		enc := Append(nil, s.msg)
		for i := range len(enc) {
			// A copy of exactly i bytes, so reading past the end cannot hit
			// bytes of the full encoding.
			prefix := append([]byte(nil), enc[:i]...)
			if m, err := Decode(prefix); err == nil {
				t.Fatalf("%s: Decode of %d/%d bytes succeeded: %s", s.name, i, len(enc), describe(m))
			} else if m != nil {
				t.Fatalf("%s: Decode returned a message with error %v", s.name, err)
			}
		}
	}
	if _, err := Decode(nil); !errors.Is(err, ErrTruncated) {
		t.Errorf("Decode(nil) = %v, want ErrTruncated", err)
	}
}

func TestDecodeTrailingBytes(t *testing.T) {
	for _, s := range samples() {
		for _, extra := range [][]byte{{0}, {0xff}, []byte("more")} {
			enc := append(Append(nil, s.msg), extra...)
			_, err := Decode(enc)
			if err == nil || !strings.Contains(err.Error(), "trailing") {
				t.Errorf("%s + %x: Decode = %v, want trailing-bytes error", s.name, extra, err)
			}
		}
	}
}

// rawRaft hand-builds a Raft payload so tests can put in values the encoder
// never writes.
type rawRaft struct {
	mask, typ uint64
	reject    byte
	entries   []byte // count already included
	snapshot  []byte // appended as is
}

func (r rawRaft) bytes() []byte {
	b := []byte{byte(TypeRaft)}
	b = binary.AppendUvarint(b, r.mask)
	b = binary.AppendUvarint(b, r.typ)
	b = append(b, 1, 2, 3, 4, 5, 6, 7, 8) // to .. rejectHint
	b = append(b, r.reject)
	if r.mask&hasContext != 0 {
		b = append(b, 0) // empty context
	}
	if r.entries == nil {
		b = append(b, 0)
	}
	b = append(b, r.entries...)
	return append(b, r.snapshot...)
}

func TestDecodeMalformed(t *testing.T) {
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	overflow := bytes.Repeat([]byte{0xff}, 11)
	app := uint64(raftpb.MessageType_MsgApp)
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"type 0", []byte{0, 1, 2}, "unknown message type 0"},
		{"type 200", []byte{200}, "unknown message type 200"},
		{"type 255", []byte{255, 0}, "unknown message type 255"},
		{"varint overflow", cat([]byte{byte(TypeHello)}, overflow), "truncated"},
		{"hello site beyond uint32", cat([]byte{byte(TypeHello)}, uv(1), uv(1<<32)), "out of range"},
		{"request bad level", cat([]byte{byte(TypeRequest)}, uv(1), uv(1), []byte{2, 0}, uv(0), uv(0), uv(0), uv(0), []byte{0}), "bad level"},
		{"request bad kind", cat([]byte{byte(TypeRequest)}, uv(1), uv(1), []byte{0, 5}, uv(0), uv(0), uv(0), uv(0), []byte{0}), "bad level 0 or kind 5"},
		{"request key beyond input", cat([]byte{byte(TypeRequest)}, uv(1), uv(1), []byte{0, 1}, uv(1000), []byte("short")), "truncated"},
		{"request unknown flags", cat([]byte{byte(TypeRequest)}, uv(1), uv(1), []byte{0, 1}, uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), []byte{byte(^(knownRequestFlags | flagAfter | flagWrites))}), "bad request flags"},
		{"request flag 0x80", cat([]byte{byte(TypeRequest)}, uv(1), uv(1), []byte{0, 1}, uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), []byte{0x80}), "bad request flags 0x80"},
		{"request read-after count beyond input", cat([]byte{byte(TypeRequest)}, uv(1), uv(1), []byte{0, 1}, uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), uv(50), []byte{0}), "exceeds input"},
		{"request value beyond input", cat([]byte{byte(TypeRequest)}, uv(1), uv(1), []byte{0, 1}, uv(0), uv(1000), []byte("short")), "truncated"},
		{"reply kind 0", cat([]byte{byte(TypeReply), 0, 0}, make([]byte, 10)), "bad reply kind 0"},
		{"reply kind 6", cat([]byte{byte(TypeReply), 6, 0}, make([]byte, 10)), "bad reply kind 6"},
		{"reply bad flags", cat([]byte{byte(TypeReply), byte(ReplySync), 8}, make([]byte, 10)), "bad reply flags"},
		{"reply deps count", cat([]byte{byte(TypeReply), byte(ReplySync), 0}, make([]byte, 7), uv(1<<40), []byte{1, 2}), "exceeds input"},
		{"recover-reply ops count", cat([]byte{byte(TypeRecoverReply)}, uv(1), uv(1<<40), make([]byte, 12)), "exceeds input"},
		{"recover-reply pooled-at count", cat([]byte{byte(TypeRecoverReply)}, uv(1), uv(0), uv(0), uv(0), []byte{0}, uv(2), uv(1), uv(1)), "2 pooled-at clocks for 0 ops"},
		{"stale-record bad op", cat([]byte{byte(TypeStaleRecord)}, uv(1), uv(1), []byte{3, 0}, uv(1), uv(0), uv(0), uv(0)), "bad level"},
		{"recover-reply bad op", cat([]byte{byte(TypeRecoverReply)}, uv(1), uv(1), uv(1), uv(1), []byte{3, 0}, uv(1), uv(0)), "bad level"},
		{"raft bad mask", rawRaft{mask: hasAll + 1, typ: app}.bytes(), "bad raft field mask"},
		{"raft without type", rawRaft{mask: hasTo | hasFrom, typ: uint64(raftpb.MessageType_MsgHeartbeat)}.bytes(), "without a type"},
		{"raft without type or fields", rawRaft{typ: app}.bytes(), "without a type"},
		{"raft type beyond range", rawRaft{mask: hasType, typ: 24}.bytes(), "bad raft message type 24"},
		{"raft type huge", rawRaft{mask: hasType, typ: 1 << 40}.bytes(), "bad raft message type"},
		{"raft local MsgHup", rawRaft{mask: hasType, typ: uint64(raftpb.MessageType_MsgHup)}.bytes(), "local-only"},
		{"raft local MsgBeat", rawRaft{mask: hasType, typ: uint64(raftpb.MessageType_MsgBeat)}.bytes(), "local-only"},
		{"raft local MsgStorageAppend", rawRaft{mask: hasType, typ: uint64(raftpb.MessageType_MsgStorageAppend)}.bytes(), "local-only"},
		{"raft bad bool", rawRaft{mask: hasType, typ: app, reject: 2}.bytes(), "bad bool"},
		{"raft entries count", rawRaft{mask: hasType, typ: app, entries: cat(uv(1<<40), make([]byte, 20))}.bytes(), "exceeds input"},
		{"raft entry mask", rawRaft{mask: hasType, typ: app, entries: cat(uv(1), []byte{entHasAll + 1, 1, 1, 0, 0})}.bytes(), "bad raft entry mask"},
		{"raft entry type", rawRaft{mask: hasType, typ: app, entries: cat(uv(1), []byte{entHasType, 1, 1, 3})}.bytes(), "bad raft entry type 3"},
		{"raft entry data beyond input", rawRaft{mask: hasType, typ: app, entries: cat(uv(1), []byte{entHasData, 1, 1, 0, 100, 1, 2, 3, 4})}.bytes(), "truncated"},
		{"raft entry data missing", rawRaft{mask: hasType, typ: app, entries: cat(uv(1), []byte{entHasData, 1, 1, 0})}.bytes(), "truncated"},
		{"raft entry data without its bit", rawRaft{mask: hasType, typ: app, entries: cat(uv(1), []byte{0, 1, 1, 0, 1, 'x'})}.bytes(), "trailing"},
		{"raft context missing", rawRaft{mask: hasType | hasContext, typ: app}.bytes()[:13], "truncated"},
		{"raft snapshot not protobuf", rawRaft{mask: hasType | hasSnapshot, typ: app, snapshot: []byte{2, 0xff, 0xff}}.bytes(), "raft snapshot"},
		{"raft snapshot missing", rawRaft{mask: hasType | hasSnapshot, typ: app}.bytes(), "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.input)
			if err == nil {
				t.Fatalf("Decode(%x) = %s, want error", tt.input, describe(m))
			}
			if m != nil {
				t.Errorf("Decode returned a message with error %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode(%x) = %v, want error containing %q", tt.input, err, tt.want)
			}
		})
	}
}

// TestRawRaftBaseline makes sure the hand-built payloads in TestDecodeMalformed
// fail for the reason each case names: unmodified, they decode.
func TestRawRaftBaseline(t *testing.T) {
	m, err := Decode(rawRaft{mask: hasAll &^ hasSnapshot, typ: uint64(raftpb.MessageType_MsgApp),
		entries: []byte{1, entHasAll, 1, 1, 0, 1, 'x'}}.bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := &raftpb.Message{Type: raftpb.MessageType_MsgApp.Enum(), To: u64(1), From: u64(2),
		Term: u64(3), LogTerm: u64(4), Index: u64(5), Commit: u64(6), Vote: u64(7),
		RejectHint: u64(8), Reject: proto.Bool(false), Context: []byte{},
		Entries: []*raftpb.Entry{{Term: u64(1), Index: u64(1), Type: raftpb.EntryType_EntryNormal.Enum(), Data: []byte("x")}}}
	if !proto.Equal(m.(*Raft).M, want) {
		t.Fatalf("got %v, want %v", m.(*Raft).M, want)
	}
}

func TestFrames(t *testing.T) {
	var stream []byte
	stream = append(stream, "junk"...)
	var want []Message
	for _, s := range samples() {
		stream = AppendFrame(stream, s.msg)
		want = append(want, s.msg)
	}
	rest := stream[len("junk"):]
	for i, w := range want {
		if len(rest) < FrameHeader {
			t.Fatalf("frame %d: stream ends early", i)
		}
		n, err := FrameLen(rest[:FrameHeader])
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if enc := Append(nil, w); n != len(enc) {
			t.Fatalf("frame %d: length %d, want %d", i, n, len(enc))
		}
		got, err := Decode(rest[FrameHeader : FrameHeader+n])
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !equalMessage(w, got) {
			t.Fatalf("frame %d: got %s, want %s", i, describe(got), describe(w))
		}
		rest = rest[FrameHeader+n:]
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left after the last frame", len(rest))
	}
}

func TestFrameLen(t *testing.T) {
	hdr := func(n uint32) []byte { return binary.LittleEndian.AppendUint32(nil, n) }
	for _, n := range []uint32{1, 2, 1 << 20, MaxFrame} {
		got, err := FrameLen(hdr(n))
		if err != nil || got != int(n) {
			t.Errorf("FrameLen(%d) = %d, %v", n, got, err)
		}
	}
	for _, n := range []uint32{0, MaxFrame + 1, math.MaxUint32} {
		if got, err := FrameLen(hdr(n)); err == nil {
			t.Errorf("FrameLen(%d) = %d, want error", n, got)
		}
	}
	for _, short := range [][]byte{nil, {}, {1}, {1, 0, 0}} {
		if got, err := FrameLen(short); err == nil {
			t.Errorf("FrameLen(%x) = %d, want error", short, got)
		}
	}
	// Bytes after the header are the payload's, not the length's.
	if got, err := FrameLen([]byte{5, 0, 0, 0, 0xff}); err != nil || got != 5 {
		t.Errorf("FrameLen with payload after the header = %d, %v; want 5", got, err)
	}
}

func TestAppendFrameLimit(t *testing.T) {
	m := &Request{Op: Op{Kind: Put, Value: make([]byte, 100)}}
	size := len(Append(nil, m))
	b := appendFrame([]byte("x"), m, size)
	if n, err := FrameLen(b[1:]); err != nil || n != size {
		t.Fatalf("frame at the limit: FrameLen = %d, %v; want %d", n, err, size)
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, fmt.Sprintf("request message of %d bytes exceeds the %d-byte frame limit", size, size-1)) {
			t.Errorf("panic %q, want one naming the message and the limit", msg)
		}
	}()
	appendFrame(nil, m, size-1)
	t.Error("appendFrame did not panic above the limit")
}

func TestAppendDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 64<<10)
	for _, s := range samples() {
		if r, ok := s.msg.(*Raft); ok && r.M.Snapshot != nil {
			continue // snapshots go through protobuf
		}
		m := s.msg
		if n := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], m) }); n != 0 {
			t.Errorf("Append(%s) allocates %v times", s.name, n)
		}
		if n := testing.AllocsPerRun(100, func() { buf = AppendFrame(buf[:0], m) }); n != 0 {
			t.Errorf("AppendFrame(%s) allocates %v times", s.name, n)
		}
	}
}
