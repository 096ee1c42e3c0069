package workload

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestYCSBShares(t *testing.T) {
	const draws = 100_000
	for _, name := range YCSBWorkloads() {
		t.Run(name, func(t *testing.T) {
			m := ycsbMixes[name]
			c := DefaultConfig()
			c.YCSB, c.WeakRatio = name, 30
			g, err := NewGenerator(c, 7)
			require.NoError(t, err)
			var reads, updates, inserts, rmws, scans, weak int
			for range draws {
				d := g.next()
				if d.level == wire.Weak {
					weak++
				}
				switch {
				case d.rmw:
					require.Equal(t, wire.Get, d.kind, "a read-modify-write starts with its read")
					rmws++
				case d.kind == wire.Scan:
					require.Less(t, d.key, c.KeySpace, "a scan starts in the key space")
					require.True(t, d.scan >= 1 && d.scan <= m.maxScan, "scan of %d keys", d.scan)
					scans++
				case d.kind == wire.Put && d.key >= c.KeySpace:
					inserts++
				case d.kind == wire.Put:
					updates++
				default:
					reads++
				}
			}
			requireShare(t, "reads", reads, draws, m.read)
			requireShare(t, "updates", updates, draws, m.update)
			requireShare(t, "inserts", inserts, draws, m.insert)
			requireShare(t, "read-modify-writes", rmws, draws, m.readModifyWrite)
			requireShare(t, "scans", scans, draws, m.scan)
			requireShare(t, "weak", weak, draws, 0.3)
		})
	}
}

func TestYCSBInsertsNeverCollide(t *testing.T) {
	seen := map[uint64]bool{}
	for offset := range uint64(3) {
		c := DefaultConfig()
		c.YCSB, c.InsertStride, c.InsertOffset = "d", 3, offset
		g, err := NewGenerator(c, 1)
		require.NoError(t, err)
		n := 0
		for n < 500 {
			if d := g.next(); d.kind == wire.Put {
				require.GreaterOrEqual(t, d.key, c.KeySpace)
				require.False(t, seen[d.key], "key %d inserted twice", d.key)
				require.Equal(t, offset, (d.key-c.KeySpace)%3, "in the session's own lane")
				seen[d.key] = true
				n++
			}
		}
	}
	require.Len(t, seen, 1500)
}

// TestYCSBReadsLatest: D's reads favour the newest keys. After the
// sessions inserted 2,000 keys, YCSB's skew puts about half the reads on
// them; a Zipfian over the loaded keys alone would put none there.
func TestYCSBReadsLatest(t *testing.T) {
	c := DefaultConfig()
	c.YCSB, c.InsertStride = "d", 2
	g, err := NewGenerator(c, 3)
	require.NoError(t, err)
	for g.inserted < 1000 {
		g.next()
	}
	var fresh, reads int
	for range 20_000 {
		d := g.next()
		if d.kind != wire.Get {
			continue
		}
		reads++
		require.Less(t, d.key, c.KeySpace+g.inserted*2, "no read beyond the newest key")
		if d.key >= c.KeySpace {
			fresh++
		}
	}
	require.Greater(t, float64(fresh)/float64(reads), 0.3, "%d of %d reads on inserted keys", fresh, reads)
}

func TestYCSBValidation(t *testing.T) {
	c := DefaultConfig()
	c.YCSB = "g"
	require.ErrorContains(t, c.Validate(), `"g" is not one of YCSB's core workloads this generator draws (a, b, c, d, e, f)`)
	c.YCSB, c.YCSBWeak = "e", []string{YCSBScan}
	require.NoError(t, c.Validate())
	c.YCSBWeak = nil
	c.YCSB, c.InsertStride, c.InsertOffset = "d", 4, 4
	require.ErrorContains(t, c.Validate(), "InsertOffset: 4 is not below the stride 4")
	c.InsertOffset = 3
	require.NoError(t, c.Validate())
}

// TestYCSBWeakKinds: only the kinds named may be weak; the others run
// strong whatever the weak share.
func TestYCSBWeakKinds(t *testing.T) {
	c := DefaultConfig()
	c.YCSB, c.WeakRatio, c.YCSBWeak = "f", 100, []string{YCSBRead}
	g, err := NewGenerator(c, 11)
	require.NoError(t, err)
	var weakReads, strongRMWs int
	for range 10_000 {
		d := g.next()
		switch {
		case d.rmw:
			require.Equal(t, wire.Strong, d.level, "a read-modify-write may not be weak here")
			strongRMWs++
		default:
			require.Equal(t, wire.Weak, d.level, "every read is weak at a weak share of 100 %")
			weakReads++
		}
	}
	require.Positive(t, weakReads)
	require.Positive(t, strongRMWs)

	c.YCSBWeak = []string{"delete"}
	require.ErrorContains(t, c.Validate(), `YCSBWeak: "delete" is not a kind of YCSB operation (read, update, insert, rmw, scan)`)
}
