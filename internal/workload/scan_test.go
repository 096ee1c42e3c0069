package workload

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// requireUniformLengths checks that scan lengths drawn uniformly from
// 1 .. longest reach both ends and average (longest+1)/2 within five
// standard deviations.
func requireUniformLengths(t *testing.T, lengths []uint64, longest uint64) {
	t.Helper()
	require.NotEmpty(t, lengths)
	sum := 0.0
	for _, l := range lengths {
		require.True(t, l >= 1 && l <= longest, "a scan of %d keys, want 1..%d", l, longest)
		sum += float64(l)
	}
	require.Equal(t, uint64(1), slices.Min(lengths), "the shortest scan")
	require.Equal(t, longest, slices.Max(lengths), "the longest scan")
	n, mean := float64(len(lengths)), (float64(longest)+1)/2
	sd := math.Sqrt((float64(longest)*float64(longest) - 1) / 12 / n)
	require.InDelta(t, mean, sum/n, 5*sd, "mean scan length")
}

// TestYCSBEScans: E is 95 % scans and 5 % inserts; the weak share applies
// to the scans when scans may be weak, and a scan's length is uniform in
// 1..100.
func TestYCSBEScans(t *testing.T) {
	const draws = 100_000
	c := DefaultConfig()
	c.YCSB, c.WeakRatio, c.YCSBWeak = "e", 30, []string{YCSBScan}
	g, err := NewGenerator(c, 5)
	require.NoError(t, err)
	var scans, weakScans, inserts int
	var lengths []uint64
	for range draws {
		d := g.next()
		switch d.kind {
		case wire.Scan:
			scans++
			if d.level == wire.Weak {
				weakScans++
			}
			lengths = append(lengths, d.scan)
		case wire.Put:
			require.GreaterOrEqual(t, d.key, c.KeySpace, "E writes only by inserting")
			require.Equal(t, wire.Strong, d.level, "inserts may not be weak here")
			inserts++
		default:
			t.Fatalf("E drew a %v", d.kind)
		}
	}
	requireShare(t, "scans", scans, draws, 0.95)
	requireShare(t, "inserts", inserts, draws, 0.05)
	requireShare(t, "weak scans", weakScans, scans, 0.3)
	requireUniformLengths(t, lengths, 100)
}

// TestTAOShares: the TAO mix is 1 % strong writes, 4 % strong reads and
// 95 % weak reads, 44 % of which scan 1..1000 keys, whatever the weak and
// write shares say.
func TestTAOShares(t *testing.T) {
	const draws = 200_000
	c := DefaultConfig()
	c.Mix, c.ZipfSkew = MixTAO, 0.8
	c.WeakRatio, c.Writes, c.WeakWrites = 10, 50, 50 // the mix fixes levels and kinds: no effect
	g, err := NewGenerator(c, 9)
	require.NoError(t, err)
	var strongWrites, strongReads, weakScans, weakReads int
	var lengths []uint64
	for range draws {
		d := g.next()
		require.Less(t, d.key, c.KeySpace)
		switch {
		case d.level == wire.Strong && d.kind == wire.Put:
			strongWrites++
		case d.level == wire.Strong && d.kind == wire.Get:
			strongReads++
		case d.level == wire.Weak && d.kind == wire.Scan:
			weakScans++
			lengths = append(lengths, d.scan)
		case d.level == wire.Weak && d.kind == wire.Get:
			weakReads++
		default:
			t.Fatalf("TAO drew a %v %v", d.level, d.kind)
		}
		require.False(t, d.rmw)
	}
	requireShare(t, "strong writes", strongWrites, draws, 0.01)
	requireShare(t, "strong reads", strongReads, draws, 0.04)
	requireShare(t, "weak", weakScans+weakReads, draws, 0.95)
	requireShare(t, "scans among weak reads", weakScans, weakScans+weakReads, 0.44)
	requireUniformLengths(t, lengths, 1000)
}

// TestScanRanges: every scan Next returns has a bounded End above its
// first key, and its range holds exactly the names of the keys it asks
// for: Limit of them from its first key, or those left before the end of
// the key space. The key space is a power of ten, so that names past it
// are wider and sort among its own.
func TestScanRanges(t *testing.T) {
	const keys = 1000
	names := NewKeyNames("", keys)
	all := make([]string, keys)
	for i := range all {
		all[i] = names.Name(uint64(i))
	}
	require.True(t, sort.StringsAreSorted(all))
	for _, mix := range []struct{ ycsb, mix string }{{ycsb: "e"}, {mix: MixTAO}} {
		t.Run(mix.ycsb+mix.mix, func(t *testing.T) {
			c := DefaultConfig()
			c.KeySpace, c.YCSB, c.Mix = keys, mix.ycsb, mix.mix
			g, err := NewGenerator(c, 3)
			require.NoError(t, err)
			scans, clamped := 0, 0
			for range 20_000 {
				op := g.Next()
				if op.Kind != wire.Scan {
					continue
				}
				scans++
				require.NotEqual(t, "", op.End, "a scan of one key alone")
				require.NotEqual(t, wire.NoEnd, op.End, "an unbounded scan")
				require.Greater(t, op.End, op.Key)
				first := sort.SearchStrings(all, op.Key)
				require.Equal(t, op.Key, all[first], "a scan starts at a key of the space")
				covered := sort.SearchStrings(all, op.End) - first
				want := min(int(op.Limit), keys-first)
				require.Equal(t, want, covered, "scan of %d from %s to %q", op.Limit, op.Key, op.End)
				if want < int(op.Limit) {
					clamped++
				}
			}
			require.Positive(t, scans)
			require.Positive(t, clamped, "some scans reach the end of the key space")
		})
	}
}

// TestScansReproducible: a seed fixes the scans, ranges and all.
func TestScansReproducible(t *testing.T) {
	run := func(c Config, seed uint64) []Op {
		g, err := NewGenerator(c, seed)
		require.NoError(t, err)
		ops := make([]Op, 5000)
		for i := range ops {
			ops[i] = g.Next()
		}
		return ops
	}
	e := DefaultConfig()
	e.YCSB = "e"
	tao := DefaultConfig()
	tao.Mix = MixTAO
	for name, c := range map[string]Config{"e": e, "tao": tao} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, run(c, 1), run(c, 1))
			require.NotEqual(t, run(c, 1), run(c, 2))
		})
	}
}

func TestMixValidation(t *testing.T) {
	for _, tt := range []struct {
		modify func(*Config)
		want   string // "" when valid
	}{
		{func(c *Config) { c.Mix = MixTAO }, ""},
		{func(c *Config) { c.Mix, c.Conflicts = MixTAO, 5 }, ""},
		{func(c *Config) { c.Mix = "linkbench" }, `Mix: "linkbench" is not a mix this generator draws (tao)`},
		{func(c *Config) { c.Mix, c.YCSB = MixTAO, "b" }, `Mix: "tao" and YCSB "b" both choose the operations' kinds`},
		{func(c *Config) { c.Mix, c.YCSBWeak = MixTAO, []string{YCSBRead} }, `Mix: "tao" fixes every operation's level`},
	} {
		c := DefaultConfig()
		tt.modify(&c)
		err := c.Validate()
		if tt.want == "" {
			require.NoError(t, err, "%+v", c)
			continue
		}
		require.ErrorContains(t, err, tt.want)
	}
	require.Equal(t, []string{MixTAO}, Mixes())
	require.Contains(t, MixHelp(), fmt.Sprintf("%s (TAO", MixTAO))
}
