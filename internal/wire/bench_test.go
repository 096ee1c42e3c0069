package wire

import (
	"bytes"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func benchRequest() *Request {
	return &Request{
		Op: Op{ID: OpID{Session: uint64(FirstClientID) + 7, Seq: 123456}, Level: Weak, Kind: Put,
			Key: "user987654", Value: bytes.Repeat([]byte{'v'}, 100)},
		AckedBelow: 123440, PrevWeak: 123450,
	}
}

// benchMsgApp is a steady-state replication message: 16 entries of 120 bytes,
// about one batched proposal each.
func benchMsgApp() *raftpb.Message {
	m := &raftpb.Message{
		Type: raftpb.MessageType_MsgApp.Enum(), To: u64(2), From: u64(1), Term: u64(5),
		LogTerm: u64(5), Index: u64(100000), Commit: u64(99990),
	}
	for i := range 16 {
		m.Entries = append(m.Entries, &raftpb.Entry{
			Term: u64(5), Index: u64(100001 + uint64(i)),
			Type: raftpb.EntryType_EntryNormal.Enum(), Data: bytes.Repeat([]byte{byte(i)}, 120),
		})
	}
	return m
}

func benchAppend(b *testing.B, m Message) {
	buf := Append(nil, m)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = Append(buf[:0], m)
	}
}

func benchDecode(b *testing.B, m Message) {
	enc := Append(nil, m)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendRequest(b *testing.B) { benchAppend(b, benchRequest()) }
func BenchmarkDecodeRequest(b *testing.B) { benchDecode(b, benchRequest()) }

func BenchmarkAppendRaftMsgApp(b *testing.B) { benchAppend(b, &Raft{M: benchMsgApp()}) }
func BenchmarkDecodeRaftMsgApp(b *testing.B) { benchDecode(b, &Raft{M: benchMsgApp()}) }

// The protobuf benchmarks process the same message as the two above, to
// measure what the hand-written raft encoding saves.

func BenchmarkProtoMarshalRaftMsgApp(b *testing.B) {
	m := benchMsgApp()
	enc, _ := proto.Marshal(m)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := proto.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProtoMarshalAppendRaftMsgApp reuses one buffer, as Append does.
func BenchmarkProtoMarshalAppendRaftMsgApp(b *testing.B) {
	m := benchMsgApp()
	buf, _ := proto.Marshal(m)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	opts := proto.MarshalOptions{}
	for b.Loop() {
		var err error
		if buf, err = opts.MarshalAppend(buf[:0], m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProtoUnmarshalRaftMsgApp(b *testing.B) {
	enc, err := proto.Marshal(benchMsgApp())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := proto.Unmarshal(enc, new(raftpb.Message)); err != nil {
			b.Fatal(err)
		}
	}
}
