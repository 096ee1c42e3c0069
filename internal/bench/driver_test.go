package bench

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/stats"
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/workload"
)

// heldSession keeps every submitted operation until the test answers it.
type heldSession struct {
	subs []submitted
}

type submitted struct {
	kind  client.Kind
	key   string
	value []byte
	level client.Level
	done  func(client.Result)
}

func (s *heldSession) ID() uint64 { return 9 }

func (s *heldSession) Submit(kind client.Kind, key string, value []byte, level client.Level, done func(client.Result)) {
	s.subs = append(s.subs, submitted{kind, key, value, level, done})
}

func (s *heldSession) answer(t *testing.T, i int, err error) {
	t.Helper()
	require.Less(t, i, len(s.subs))
	s.subs[i].done(client.Result{Err: err, Latency: time.Millisecond})
}

func testDriver(t *testing.T, sess *heldSession, c workload.Config, limit int) *driver {
	gen, err := workload.NewGenerator(c, 1)
	require.NoError(t, err)
	return &driver{session: sess, gen: gen, rec: stats.NewRecorder(time.Now()), pendings: 1, limit: limit,
		stopped: new(atomic.Bool), outage: &outage{}, ops: new(atomic.Int64), drained: make(chan struct{}),
		written: map[string]struct{}{}}
}

// TestReadModifyWrite: YCSB F's read-modify-write reads a key, then writes
// the same key at the same level once the read is answered, and only then
// does the next operation start.
func TestReadModifyWrite(t *testing.T) {
	c := workload.DefaultConfig()
	c.YCSB, c.WeakRatio = "f", 50
	sess := &heldSession{}
	d := testDriver(t, sess, c, 200)
	d.start()
	rmws := 0
	for i := 0; i < len(sess.subs); i++ {
		s := sess.subs[i]
		sess.answer(t, i, nil)
		if s.kind != wire.Get || len(sess.subs) <= i+1 || sess.subs[i+1].kind != wire.Put {
			continue
		}
		next := sess.subs[i+1]
		if next.key == s.key {
			require.Equal(t, s.level, next.level, "the write at the read's level")
			require.NotEmpty(t, next.value)
			rmws++
		}
	}
	require.Greater(t, rmws, 60, "about half of 200 operations")
	require.Equal(t, int64(200+rmws), d.ops.Load(), "a read-modify-write completes twice")
	select {
	case <-d.drained:
	default:
		t.Fatal("the driver did not drain after its last operation")
	}
}

// TestReadModifyWriteWhoseReadFails ends there: no write follows a read
// that failed, and the session goes on.
func TestReadModifyWriteWhoseReadFails(t *testing.T) {
	c := workload.DefaultConfig()
	c.YCSB = "f"
	sess := &heldSession{}
	d := testDriver(t, sess, c, 50)
	d.start()
	for i := 0; i < len(sess.subs); i++ {
		if sess.subs[i].kind == wire.Get {
			sess.answer(t, i, errors.New("timed out"))
			if i+1 < len(sess.subs) && sess.subs[i+1].kind == wire.Put {
				require.NotEqual(t, sess.subs[i].key, sess.subs[i+1].key, "a failed read is not followed by its write")
			}
			continue
		}
		sess.answer(t, i, nil)
	}
	require.Equal(t, 50, d.issued)
	require.Zero(t, d.inflight)
}

// TestScansSubmitted: a scan goes to the session as the client's ScanKind,
// its value the range read EncodeScan makes of the drawn range (bounded,
// with the drawn limit), and its latency lands in its level's scan class.
func TestScansSubmitted(t *testing.T) {
	c := workload.DefaultConfig()
	c.YCSB, c.WeakRatio = "e", 50
	sess := &heldSession{}
	d := testDriver(t, sess, c, 300)
	d.start()
	scans := map[client.Level]int{}
	for i := 0; i < len(sess.subs); i++ {
		s := sess.subs[i]
		sess.answer(t, i, nil)
		if s.kind != client.ScanKind {
			require.Equal(t, wire.Put, s.kind, "E's other operations are inserts")
			continue
		}
		scans[s.level]++
		read, ok := wire.ScanRead(&wire.Op{Kind: s.kind, Key: s.key, Value: s.value})
		require.True(t, ok, "the replicas read the scan's range from its value")
		require.Equal(t, s.key, read.Key)
		require.Greater(t, read.End, read.Key, "a bounded range after its first key")
		require.NotEqual(t, wire.NoEnd, read.End)
		require.True(t, read.Limit >= 1 && read.Limit <= 100, "limit %d", read.Limit)
		again, err := client.EncodeScan(read)
		require.NoError(t, err)
		require.Equal(t, again, s.value, "the value is EncodeScan's")
	}
	require.Positive(t, scans[client.Strong])
	require.Positive(t, scans[client.Weak])
	require.Equal(t, int64(scans[client.Strong]), d.rec.Summary(stats.StrongScan).Count)
	require.Equal(t, int64(scans[client.Weak]), d.rec.Summary(stats.WeakScan).Count)
	require.Zero(t, d.rec.Summary(stats.WeakRead).Count+d.rec.Summary(stats.StrongRead).Count, "scans are not reads")
}
