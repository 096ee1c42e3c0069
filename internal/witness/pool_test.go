package witness

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func op(sess, seq, key uint64, kind wire.OpKind) *wire.Op {
	return &wire.Op{ID: wire.OpID{Session: sess, Seq: seq}, Kind: kind, Key: strconv.FormatUint(key, 10)}
}

func TestConflicts(t *testing.T) {
	p := New()
	p.Add(op(1, 1, 5, wire.Get), 0)
	tests := []struct {
		name string
		op   *wire.Op
		want bool
	}{
		{"read after read", op(2, 1, 5, wire.Get), false},
		{"write after read", op(2, 1, 5, wire.Put), true},
		{"delete after read", op(2, 1, 5, wire.Delete), true},
		{"other key", op(2, 1, 6, wire.Put), false},
		{"itself", op(1, 1, 5, wire.Put), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, p.Conflicting(tc.op, nil) != nil)
		})
	}
	only := func(r *Record) bool { return r.Op.Kind.IsWrite() }
	require.Nil(t, p.Conflicting(op(2, 1, 5, wire.Put), only), "the filter sees only pooled writes")
}

func TestLatestAndRemove(t *testing.T) {
	p := New()
	p.Add(op(1, 1, 5, wire.Put), 0)
	p.Add(op(2, 1, 5, wire.Put), 0)
	p.Add(op(1, 2, 6, wire.Put), 0)
	require.Equal(t, wire.OpID{Session: 2, Seq: 1}, p.Latest("5", nil).Op.ID)
	require.True(t, p.Remove(wire.OpID{Session: 2, Seq: 1}))
	require.False(t, p.Remove(wire.OpID{Session: 2, Seq: 1}))
	require.Equal(t, wire.OpID{Session: 1, Seq: 1}, p.Latest("5", nil).Op.ID)
	n := 0
	p.Session(1, func(*Record) { n++ })
	require.Equal(t, 2, n)
	require.Equal(t, 2, p.Len())
	require.Same(t, p.Get(wire.OpID{Session: 1, Seq: 2}), p.Add(op(1, 2, 6, wire.Put), 0), "adding twice keeps one record")
}

// TestSessionKeyListsOnlyTheSessionsRecordsOnTheKey, with the index by
// session and key and without it (a pool that looks through the session's
// records instead).
func TestSessionKeyListsOnlyTheSessionsRecordsOnTheKey(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		p := New()
		if indexed {
			p.IndexSessionKeys()
		}
		p.Add(op(1, 1, 5, wire.Put), 0)
		p.Add(op(1, 2, 6, wire.Put), 1)
		p.Add(op(2, 1, 5, wire.Put), 0)
		p.Add(op(1, 3, 5, wire.Put), 2)
		ids := func(session, key uint64) []wire.OpID {
			var out []wire.OpID
			p.SessionKey(session, strconv.FormatUint(key, 10), func(r *Record) { out = append(out, r.Op.ID) })
			return out
		}
		require.ElementsMatch(t, []wire.OpID{{Session: 1, Seq: 1}, {Session: 1, Seq: 3}}, ids(1, 5), "indexed %v", indexed)
		require.Equal(t, []wire.OpID{{Session: 2, Seq: 1}}, ids(2, 5))
		require.True(t, p.Remove(wire.OpID{Session: 1, Seq: 1}))
		require.Equal(t, []wire.OpID{{Session: 1, Seq: 3}}, ids(1, 5))
		require.True(t, p.Remove(wire.OpID{Session: 1, Seq: 3}))
		require.Empty(t, ids(1, 5))
		if indexed {
			require.Len(t, p.bySessionKey, 2, "an emptied list leaves the index")
		} else {
			require.Nil(t, p.bySessionKey)
		}
	}
}

func TestPoolValueBytesFollowsAddAndRemove(t *testing.T) {
	p := New()
	a := wire.Op{ID: wire.OpID{Session: 1, Seq: 1}, Kind: wire.Put, Key: "1", Value: []byte("abc")}
	b := wire.Op{ID: wire.OpID{Session: 1, Seq: 2}, Kind: wire.Put, Key: "1", Value: []byte("de")}
	p.Add(&a, 0)
	p.Add(&b, 0)
	p.Add(&a, 0) // already pooled
	require.EqualValues(t, 5, p.ValueBytes())
	p.Remove(a.ID)
	p.Remove(a.ID)
	require.EqualValues(t, 2, p.ValueBytes())
}

func TestStaleListsOldRecordsInArrivalOrder(t *testing.T) {
	p := New()
	p.Add(op(1, 1, 5, wire.Put), 0)
	p.Tick()
	p.Add(op(2, 1, 6, wire.Put), 0)
	p.Add(op(3, 1, 7, wire.Put), 0)
	p.Tick()
	p.Add(op(4, 1, 8, wire.Put), 0)
	require.Empty(t, p.Stale(3))
	var sessions []uint64
	for _, r := range p.Stale(1) {
		sessions = append(sessions, r.Op.ID.Session)
	}
	require.Equal(t, []uint64{1, 2, 3}, sessions)
	require.Len(t, p.Stale(0), 4)
}

// A leader's record kept by its raft log stays out of the witness log
// until Keep, which logs it once.
func TestAddInLogIsLoggedOnlyWhenKept(t *testing.T) {
	p, l := New(), &MemLog{}
	p.SetLog(l)
	p.Add(op(1, 1, 7, wire.Put), 0)
	rec := p.AddInLog(op(1, 2, 8, wire.Put), 1, 42)
	require.Equal(t, uint64(42), rec.InLog)
	require.Same(t, rec, p.AddInLog(op(1, 2, 8, wire.Put), 1, 43), "already pooled")
	require.Equal(t, uint64(42), rec.InLog)
	require.NoError(t, l.Sync())
	got, err := l.Load()
	require.NoError(t, err)
	require.Len(t, got, 1)

	p.Keep(rec)
	p.Keep(rec)
	require.Zero(t, rec.InLog)
	require.NoError(t, l.Sync())
	got, err = l.Load()
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, Entry{Op: *op(1, 2, 8, wire.Put), PrevWeak: 1}, got[1])
}

// TestDurableFollowsTheRoundsWritten: a record is durable once the write
// of the round that added it is done; records added before the first
// round (loaded from the disk) are durable from the start.
func TestDurableFollowsTheRoundsWritten(t *testing.T) {
	p := New()
	loaded := p.Add(&wire.Op{ID: wire.OpID{Session: 1, Seq: 1}, Kind: wire.Put, Key: "a"}, 0)
	p.EndRound()
	first := p.Add(&wire.Op{ID: wire.OpID{Session: 1, Seq: 2}, Kind: wire.Put, Key: "a"}, 0)
	p.EndRound()
	second := p.Add(&wire.Op{ID: wire.OpID{Session: 1, Seq: 3}, Kind: wire.Put, Key: "b"}, 0)
	require.True(t, p.Durable(loaded))
	require.False(t, p.Durable(first))
	p.Written(1)
	require.True(t, p.Durable(first))
	require.False(t, p.Durable(second))
	p.Written(0)
	require.True(t, p.Durable(first), "a later report of fewer rounds takes nothing back")
	require.False(t, p.Durable(nil))
}
