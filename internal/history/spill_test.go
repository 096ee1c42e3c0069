package history

import (
	"bytes"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestSpillingRecorderWritesEverything: sessions recording at once, over
// several chunks, into a spilling recorder: the file it finishes holds
// every event once, the replicas' states and the faults, while the
// recorder held no more than the chunk being filled.
func TestSpillingRecorderWritesEverything(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	r, err := NewSpillingRecorder(&out)
	require.NoError(t, err)
	const sessions, each = 4, chunkEvents + 1000
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			for i := range each {
				inv := r.Now()
				r.Append(Event{Session: uint64(s + 1), Seq: uint64(i + 1), Kind: wire.Put, Key: "k",
					Value: []byte{byte(s), byte(i), byte(i >> 8), byte(i >> 16)}, Invoke: inv, Return: r.Now(), Outcome: OK})
				r.mu.Lock()
				held := len(r.events)
				r.mu.Unlock()
				assert.LessOrEqual(t, held, 1, "the recorder holds more than the chunk being filled")
			}
		})
	}
	wg.Wait()
	require.Equal(t, sessions*each, r.Len())
	r.AddReplica(ReplicaState{ID: 1, Applied: 9, Digest: 7})
	r.AddFault("a fault")
	require.NoError(t, r.Close())
	require.Error(t, r.Close(), "a second Close")
	require.Panics(t, func() { r.Append(Event{Session: 9, Seq: 1}) })

	f, err := Decode(out.Bytes())
	require.NoError(t, err)
	require.Len(t, f.Events, sessions*each)
	seen := make([][]bool, sessions)
	for s := range seen {
		seen[s] = make([]bool, each)
	}
	for _, e := range f.Events {
		require.False(t, seen[e.Session-1][e.Seq-1], "event %d.%d twice", e.Session, e.Seq)
		seen[e.Session-1][e.Seq-1] = true
		i := int(e.Seq - 1)
		require.Equal(t, []byte{byte(e.Session - 1), byte(i), byte(i >> 8), byte(i >> 16)}, e.Value)
	}
	for s := range seen {
		require.False(t, slices.Contains(seen[s], false), "session %d lost events", s+1)
	}
	require.Equal(t, []ReplicaState{{ID: 1, Applied: 9, Digest: 7}}, f.Replicas)
	require.Equal(t, []string{"a fault"}, f.Faults)
}

// TestSpillingRecorderReportsWhatItCouldNotWrite: an invalid event stops
// the file, and Close says why rather than finishing a file without it.
func TestSpillingRecorderReportsWhatItCouldNotWrite(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	r, err := NewSpillingRecorder(&out)
	require.NoError(t, err)
	r.Append(Event{Session: 1, Seq: 1, Kind: wire.Get, Key: "k", Outcome: Outcome(9)})
	require.Error(t, r.Close())
	_, err = Decode(out.Bytes())
	require.Error(t, err, "the file was finished without the event")
	require.Error(t, NewRecorder().Close(), "Close of an in-memory recorder is refused")
}
