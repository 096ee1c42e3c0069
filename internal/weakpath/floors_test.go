package weakpath

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func stamped(f Floors, session uint64) wire.Request {
	req := wire.Request{Op: wire.Op{ID: wire.OpID{Session: session}}}
	f.Stamp(&req)
	return req
}

func TestFloorsKeepTheNewestSpeculativePosition(t *testing.T) {
	f := make(Floors)
	f.ObserveSpeculative(1, wire.Position{Term: 2, Index: 50})
	f.ObserveSpeculative(1, wire.Position{Term: 2, Index: 40})
	require.Equal(t, wire.Position{Term: 2, Index: 50}, stamped(f, 1).SpecFloor)
	// A later term comes later, whatever its index.
	f.ObserveSpeculative(1, wire.Position{Term: 3, Index: 45})
	require.Equal(t, wire.Position{Term: 3, Index: 45}, stamped(f, 1).SpecFloor)
	require.Zero(t, stamped(f, 2).SpecFloor, "sessions have their own floors")
}

func TestCommitOfALaterOperationCoversTheSpeculation(t *testing.T) {
	f := make(Floors)
	for seq := uint64(1); seq <= 3; seq++ {
		f.Issued(wire.OpID{Session: 1, Seq: seq})
	}
	f.ObserveSpeculative(1, wire.Position{Term: 2, Index: 50})
	// Operation 3 was issued before the speculation was observed: its
	// commit says nothing of where the speculated operation ends up.
	f.ObserveCommitted(wire.OpID{Session: 1, Seq: 3}, 60)
	req := stamped(f, 1)
	require.Equal(t, uint64(60), req.MinApplied)
	require.Equal(t, wire.Position{Term: 2, Index: 50}, req.SpecFloor)
	f.Issued(wire.OpID{Session: 1, Seq: 4})
	f.ObserveCommitted(wire.OpID{Session: 1, Seq: 4}, 70)
	req = stamped(f, 1)
	require.Equal(t, uint64(70), req.MinApplied)
	require.Zero(t, req.SpecFloor)
}

func TestReadStatesRaiseOnlyTheCommittedFloor(t *testing.T) {
	f := make(Floors)
	f.Issued(wire.OpID{Session: 1, Seq: 1})
	f.ObserveSpeculative(1, wire.Position{Term: 2, Index: 50})
	f.ObserveState(1, 40)
	f.ObserveState(1, 30)
	req := stamped(f, 1)
	require.Equal(t, uint64(40), req.MinApplied)
	require.Equal(t, wire.Position{Term: 2, Index: 50}, req.SpecFloor)
}

func TestFloorsKeepWritesReadEarlyUntilCovered(t *testing.T) {
	f := make(Floors)
	w := wire.OpID{Session: 9, Seq: 4}
	for seq := uint64(1); seq <= 2; seq++ {
		f.Issued(wire.OpID{Session: 1, Seq: seq})
	}
	f.ObserveReadDep(1, w)
	f.ObserveReadDep(1, w)
	f.ObserveReadDep(1, wire.OpID{Session: 1, Seq: 1})
	f.ObserveReadDep(1, wire.OpID{})
	require.Equal(t, []wire.OpID{w}, stamped(f, 1).ReadAfter,
		"once each, and not the session's own writes, which its replica holds")
	require.Empty(t, stamped(f, 2).ReadAfter, "sessions have their own floors")

	// Operation 2 was issued before the read: its commit proves nothing.
	f.ObserveCommitted(wire.OpID{Session: 1, Seq: 2}, 80)
	require.Equal(t, []wire.OpID{w}, stamped(f, 1).ReadAfter)
	// A weak read served after it: its replica had applied it.
	f.Satisfied(1, []wire.OpID{w})
	require.Empty(t, stamped(f, 1).ReadAfter)

	f.ObserveReadDep(1, w)
	f.Issued(wire.OpID{Session: 1, Seq: 3})
	f.ObserveCommitted(wire.OpID{Session: 1, Seq: 3}, 90)
	require.Empty(t, stamped(f, 1).ReadAfter, "an operation issued after the read committed after it")
}

// TestSpeculationStaysWhileAWriteReadEarlyIsNamed: a read completed on the
// fast path after a newer position was observed names a write the newer
// position's commit cover does not reach. The position stays as long as
// the write is named: a replica that no longer knows the write (its
// session expired) finds it applied by the position.
func TestSpeculationStaysWhileAWriteReadEarlyIsNamed(t *testing.T) {
	f := make(Floors)
	w := wire.OpID{Session: 9, Seq: 4}
	f.Issued(wire.OpID{Session: 1, Seq: 1})
	f.ObserveSpeculative(1, wire.Position{Term: 2, Index: 50})
	f.Issued(wire.OpID{Session: 1, Seq: 2})
	f.ObserveSpeculative(1, wire.Position{Term: 2, Index: 40}) // the read, older
	f.ObserveReadDep(1, w)
	f.Issued(wire.OpID{Session: 1, Seq: 3})

	f.ObserveCommitted(wire.OpID{Session: 1, Seq: 2}, 60)
	req := stamped(f, 1)
	require.Equal(t, []wire.OpID{w}, req.ReadAfter, "operation 2 was issued before the read completed")
	require.Equal(t, wire.Position{Term: 2, Index: 50}, req.SpecFloor, "dropped while the write is named")

	f.ObserveCommitted(wire.OpID{Session: 1, Seq: 3}, 70)
	req = stamped(f, 1)
	require.Empty(t, req.ReadAfter)
	require.Zero(t, req.SpecFloor)
}
