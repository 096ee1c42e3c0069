package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// sampleTxn is a transaction that puts two keys and reads a range of
// both, and its answer.
func sampleTxn() (program, result []byte) {
	t := &wire.Transaction{
		Compares: []wire.Compare{{Key: "user7", Target: wire.CompareValue, Result: wire.Equal, Value: []byte("v1")}},
		Then: []wire.TxnOp{
			{Kind: wire.Put, Key: "a", Value: []byte("t1")},
			{Kind: wire.Put, Key: "b", Value: []byte("t2"), PrevKV: true},
			{Kind: wire.Get, Key: "a", End: "c", Limit: 5},
		},
		Else: []wire.TxnOp{{Kind: wire.Delete, Key: "a", End: "\x00"}},
	}
	r := &wire.TxnResult{Succeeded: true, Results: []wire.TxnOpResult{
		{},
		{},
		{KVs: []wire.KeyValue{{Key: "a", Value: []byte("t1"), Create: 7, Mod: 7, Version: 1},
			{Key: "b", Value: []byte("t2"), Create: 7, Mod: 7, Version: 1}}, Count: 2},
	}}
	return wire.AppendTxn(nil, t), wire.AppendTxnResult(nil, r)
}

func sampleFile() *File {
	program, result := sampleTxn()
	return &File{
		Events: []Event{
			{Session: 1, Seq: 1, Level: wire.Weak, Kind: wire.Put, Key: "user7", Value: []byte("v1"), Invoke: 10, Return: 20, Outcome: OK, Slot: 3},
			{Session: 1, Seq: 2, Level: wire.Strong, Kind: wire.Get, Key: "user7", Value: []byte("v1"), Found: true, Invoke: 30, Return: 45, Outcome: OK, Slot: 4},
			{Session: 2, Seq: 1, Level: wire.Strong, Kind: wire.Get, Key: "\x00\xff binary", Invoke: 5, Outcome: Unknown},
			{Session: 1 << 40, Seq: 9, Level: wire.Strong, Kind: wire.Put, Key: "", Value: []byte{}, Invoke: -3, Outcome: Failed},
			{Session: 1, Seq: 3, Level: wire.Weak, Kind: wire.Delete, Key: "user7", Invoke: 50, Return: 60, Outcome: OK, Slot: 6},
			{Session: 1, Seq: 4, Level: wire.Strong, Kind: wire.Txn, Value: program, Result: result, Invoke: 70, Return: 90, Outcome: OK, Slot: 7},
			{Session: 2, Seq: 2, Level: wire.Weak, Kind: wire.Txn, Key: "a", Value: program, Invoke: 75, Outcome: Unknown},
		},
		Replicas: []ReplicaState{{ID: 1, Applied: 4, Digest: 0xdeadbeefcafef00d}, {ID: 2, Applied: 4, Digest: 1 << 63}},
		Faults:   []string{"crash replica 2 at 1s", ""},
	}
}

func encode(t testing.TB, f *File) []byte {
	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, f))
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	f := sampleFile()
	path := filepath.Join(t.TempDir(), "run.hkvh")
	require.NoError(t, WriteFile(path, f))
	got, err := ReadFile(path)
	require.NoError(t, err)
	f.Events[3].Value = nil // empty and nil values are the same thing on disk
	assert.Equal(t, f, got)

	empty, err := Decode(encode(t, &File{}))
	require.NoError(t, err)
	assert.Equal(t, &File{}, empty)
}

func TestStreamingWriter(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	require.NoError(t, err)
	f := sampleFile()
	// Records may be interleaved; the reader groups them.
	require.NoError(t, w.Fault(f.Faults[0]))
	require.NoError(t, w.Event(&f.Events[0]))
	require.NoError(t, w.Replica(f.Replicas[0]))
	require.NoError(t, w.Event(&f.Events[1]))
	require.NoError(t, w.Close())
	require.Error(t, w.Event(&f.Events[0]), "write after Close")

	got, err := Read(&buf)
	require.NoError(t, err)
	assert.Equal(t, f.Events[:2], got.Events)
	assert.Equal(t, f.Replicas[:1], got.Replicas)
	assert.Equal(t, f.Faults[:1], got.Faults)
}

func TestWriterRejectsInvalidEvent(t *testing.T) {
	w, err := NewWriter(&bytes.Buffer{})
	require.NoError(t, err)
	assert.Error(t, w.Event(&Event{Kind: 9}))
	assert.Error(t, w.Event(&Event{Kind: wire.Delete, Value: []byte("x")}), "a delete writes no value")
	assert.Error(t, w.Event(&Event{Outcome: OK, Invoke: 10, Return: 5}))
	assert.Error(t, w.Event(&Event{Kind: wire.Put, Value: []byte("x"), Result: []byte{1, 0}}), "a result on a put")
}

// TestTxnEventValid: a transaction's program must decode, and its result,
// when it completed, must decode and answer each operation of the branch
// that ran; one that did not complete has no result.
func TestTxnEventValid(t *testing.T) {
	program, result := sampleTxn()
	ok := Event{Kind: wire.Txn, Value: program, Result: result, Outcome: OK}
	require.NoError(t, ok.Valid())
	prog, res, err := ok.Txn()
	require.NoError(t, err)
	assert.Len(t, prog.Then, 3)
	assert.True(t, res.Succeeded)

	pending := Event{Kind: wire.Txn, Value: program, Outcome: Unknown}
	require.NoError(t, pending.Valid())
	_, res, err = pending.Txn()
	require.NoError(t, err)
	assert.Nil(t, res)

	elseRan := wire.AppendTxnResult(nil, &wire.TxnResult{Results: []wire.TxnOpResult{{Deleted: 2}}})
	require.NoError(t, (&Event{Kind: wire.Txn, Value: program, Result: elseRan, Outcome: OK}).Valid())

	bad := map[string]Event{
		"no program":           {Kind: wire.Txn, Outcome: Unknown, Value: []byte{0xff}},
		"program trailing":     {Kind: wire.Txn, Outcome: Unknown, Value: append(bytes.Clone(program), 0)},
		"nested transaction":   {Kind: wire.Txn, Outcome: Unknown, Value: wire.AppendTxn(nil, &wire.Transaction{Then: []wire.TxnOp{{Kind: wire.Txn}}})},
		"completed, no result": {Kind: wire.Txn, Value: program, Outcome: OK},
		"result garbage":       {Kind: wire.Txn, Value: program, Result: []byte{1, 9}, Outcome: OK},
		"too few results": {Kind: wire.Txn, Value: program, Outcome: OK,
			Result: wire.AppendTxnResult(nil, &wire.TxnResult{Succeeded: true, Results: make([]wire.TxnOpResult, 2)})},
		"results of the other branch": {Kind: wire.Txn, Value: program, Outcome: OK,
			Result: wire.AppendTxnResult(nil, &wire.TxnResult{Succeeded: false, Results: make([]wire.TxnOpResult, 3)})},
		"failed with a result": {Kind: wire.Txn, Value: program, Result: result, Outcome: Failed},
		"found":                {Kind: wire.Txn, Value: program, Result: result, Outcome: OK, Found: true},
	}
	for name, e := range bad {
		assert.Error(t, e.Valid(), name)
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	good := encode(t, sampleFile())
	// Every proper prefix is truncated input.
	for n := range len(good) {
		_, err := Decode(good[:n])
		require.ErrorIs(t, err, ErrCorrupt, "prefix of %d bytes", n)
	}
	// Every single-byte change is caught (checksum or structure).
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		_, err := Decode(bad)
		require.ErrorIs(t, err, ErrCorrupt, "byte %d flipped", i)
	}
	_, err := Decode(append(bytes.Clone(good), 0))
	assert.ErrorIs(t, err, ErrCorrupt, "trailing byte")
}

func TestRecorderConcurrent(t *testing.T) {
	r := NewRecorder()
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Go(func() {
			for i := range 100 {
				inv := r.Now()
				r.Append(Event{Session: uint64(s), Seq: uint64(i), Invoke: inv, Return: r.Now(), Outcome: OK})
			}
		})
	}
	wg.Wait()
	r.AddReplica(ReplicaState{ID: 1})
	r.AddFault("none")
	f := r.File()
	assert.Len(t, f.Events, 400)
	assert.Equal(t, 400, r.Len())
	assert.Len(t, f.Replicas, 1)
	assert.Equal(t, []string{"none"}, f.Faults)
	for _, e := range f.Events {
		assert.GreaterOrEqual(t, e.Return, e.Invoke)
	}
}

// FuzzReadFile fuzzes what ReadFile does after reading the bytes.
func FuzzReadFile(f *testing.F) {
	f.Add(encode(f, sampleFile()))
	f.Add(encode(f, &File{}))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		hf, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		// Whatever decodes in the current version must re-encode to the
		// same bytes (older versions re-encode in the current one).
		if !bytes.HasPrefix(data, []byte(Magic)) {
			return
		}
		if again := encode(t, hf); !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n%x\n%x", data, again)
		}
	})
}

// TestRecorderKeepsOneCopyOfEachValue: reads that returned a value written
// earlier share the write's copy, and Take hands over what was recorded.
func TestRecorderKeepsOneCopyOfEachValue(t *testing.T) {
	r := NewRecorder()
	r.Append(Event{Session: 1, Seq: 1, Kind: wire.Put, Key: "user7", Value: []byte("v1"), Outcome: OK})
	for seq := uint64(2); seq < 5; seq++ {
		r.Append(Event{Session: 1, Seq: seq, Kind: wire.Get, Key: "user7", Value: []byte("v1"), Found: true, Outcome: OK})
	}
	r.Append(Event{Session: 2, Seq: 1, Kind: wire.Get, Key: "user7", Value: []byte("v2"), Found: true, Outcome: OK})
	f := r.Take()
	require.Len(t, f.Events, 5)
	for _, e := range f.Events[1:4] {
		require.Equal(t, "v1", string(e.Value))
		require.Same(t, &f.Events[0].Value[0], &e.Value[0], "a read kept its own copy of a recorded value")
	}
	require.Equal(t, "v2", string(f.Events[4].Value))
	require.Zero(t, r.Len(), "Take left events behind")
}

// TestAppendNeverMovesWhatWasRecorded: recording an event never copies
// the events recorded before it (a long checked run's clients waited
// seconds on each such copy), and Take and File still return them all,
// in order.
func TestAppendNeverMovesWhatWasRecorded(t *testing.T) {
	r := NewRecorder()
	r.Append(Event{Seq: 0})
	first := &r.events[0][0]
	const n = 3*chunkEvents + 5
	for i := 1; i < n; i++ {
		r.Append(Event{Seq: uint64(i)})
	}
	require.Same(t, first, &r.events[0][0], "the first event moved")
	require.Equal(t, n, r.Len())
	copied := r.File()
	taken := r.Take()
	for _, f := range []*File{copied, taken} {
		require.Len(t, f.Events, n)
		for i, e := range f.Events {
			require.Equal(t, uint64(i), e.Seq)
		}
	}
	require.Zero(t, r.Len())
}

// oldFile builds a history file of an earlier version from event
// payloads.
func oldFile(magic string, payloads ...[]byte) []byte {
	body := []byte(magic)
	for _, p := range payloads {
		body = append(body, tagEvent)
		body = binary.AppendUvarint(body, uint64(len(p)))
		body = append(body, p...)
	}
	var end []byte
	end = binary.AppendUvarint(end, uint64(len(payloads)))
	end = binary.LittleEndian.AppendUint32(end, crc32.Checksum(body, castagnoli))
	body = append(body, tagEnd)
	body = binary.AppendUvarint(body, uint64(len(end)))
	return append(body, end...)
}

// TestDecodesVersion1: a version 1 file, keys as uvarints, reads back with
// each key in its decimal form.
func TestDecodesVersion1(t *testing.T) {
	var payloads [][]byte
	for _, key := range []uint64{7, 1 << 63} {
		var p []byte
		p = binary.AppendUvarint(p, 1) // session
		p = binary.AppendUvarint(p, key+1)
		p = append(p, byte(wire.Strong), byte(wire.Put), byte(OK), 0)
		p = binary.AppendUvarint(p, key)
		p = binary.AppendVarint(p, 10) // invoke
		p = binary.AppendVarint(p, 20) // return
		p = binary.AppendUvarint(p, 3) // slot
		p = binary.AppendUvarint(p, 2)
		p = append(p, "v1"...)
		payloads = append(payloads, p)
	}
	f, err := Decode(oldFile(magicV1, payloads...))
	require.NoError(t, err)
	require.Len(t, f.Events, 2)
	assert.Equal(t, "7", f.Events[0].Key)
	assert.Equal(t, "9223372036854775808", f.Events[1].Key)
	assert.Equal(t, []byte("v1"), f.Events[1].Value)
}

// v2Event encodes an event as version 2 did: no result after the value.
func v2Event(kind wire.OpKind, key, value string) []byte {
	var p []byte
	p = binary.AppendUvarint(p, 1) // session
	p = binary.AppendUvarint(p, 4) // seq
	p = append(p, byte(wire.Weak), byte(kind), byte(OK), 0)
	p = binary.AppendUvarint(p, uint64(len(key)))
	p = append(p, key...)
	p = binary.AppendVarint(p, 10) // invoke
	p = binary.AppendVarint(p, 20) // return
	p = binary.AppendUvarint(p, 3) // slot
	p = binary.AppendUvarint(p, uint64(len(value)))
	return append(p, value...)
}

// TestDecodesVersion2: a version 2 file, events without results, reads
// back; a transaction in one is refused, as version 2 had none.
func TestDecodesVersion2(t *testing.T) {
	f, err := Decode(oldFile(magicV2, v2Event(wire.Put, "\x00k", "v1"), v2Event(wire.Delete, "k", "")))
	require.NoError(t, err)
	require.Len(t, f.Events, 2)
	assert.Equal(t, Event{Session: 1, Seq: 4, Level: wire.Weak, Kind: wire.Put, Key: "\x00k", Value: []byte("v1"),
		Invoke: 10, Return: 20, Outcome: OK, Slot: 3}, f.Events[0])
	assert.Equal(t, wire.Delete, f.Events[1].Kind)
	assert.Nil(t, f.Events[1].Result)

	program, _ := sampleTxn()
	_, err = Decode(oldFile(magicV2, v2Event(wire.Txn, "", string(program))))
	require.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "transaction in a version 2 history")
}

// TestReadSharesEachValue: the reads that returned one value share one
// copy of it once read back, and nothing aliases what was read.
func TestReadSharesEachValue(t *testing.T) {
	f := &File{Events: []Event{
		{Session: 1, Seq: 1, Kind: wire.Put, Key: "k", Value: []byte("v1"), Outcome: OK, Return: 2},
		{Session: 2, Seq: 1, Kind: wire.Get, Key: "k", Value: []byte("v1"), Found: true, Outcome: OK, Return: 3},
		{Session: 3, Seq: 1, Kind: wire.Get, Key: "k", Value: []byte("v1"), Found: true, Outcome: OK, Return: 4},
	}}
	data := encode(t, f)
	got, err := Decode(data)
	require.NoError(t, err)
	require.Equal(t, f.Events, got.Events)
	require.Same(t, &got.Events[1].Value[0], &got.Events[2].Value[0], "two reads of v1 kept a copy each")
	for i := range data {
		data[i] = 0
	}
	require.Equal(t, "v1", string(got.Events[0].Value), "a value still points into what was read")
}

// TestReadAllocatesEventsOnce: a history of many events is read into a
// slice sized once from its first events' records, not grown by
// doubling, and read back whole.
func TestReadAllocatesEventsOnce(t *testing.T) {
	const n = 3 * sampleEvents
	f := &File{}
	for i := range n {
		f.Events = append(f.Events, Event{Session: uint64(i%7 + 1), Seq: uint64(i/7 + 1), Kind: wire.Put, Key: fmt.Sprint("user", i%100),
			Value: fmt.Appendf(nil, "v%d", i), Outcome: OK, Invoke: int64(i), Return: int64(i + 1)})
	}
	path := filepath.Join(t.TempDir(), "h")
	require.NoError(t, WriteFile(path, f))
	got, err := ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, f.Events, got.Events)
	require.LessOrEqual(t, cap(got.Events), n*13/10, "grown past what the file holds")
}

// TestReadReportsAFailedRead: a history that could not be read is not
// called corrupt.
func TestReadReportsAFailedRead(t *testing.T) {
	data := encode(t, sampleFile())
	broken := errors.New("disk gone")
	_, err := Read(io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(broken)))
	require.ErrorIs(t, err, broken)
	require.NotErrorIs(t, err, ErrCorrupt)
}
