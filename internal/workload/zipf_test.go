package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestZetaTail(t *testing.T) {
	const m, n = 1000, 1_000_000
	for _, theta := range []float64{0.01, 0.5, 0.9, 0.99, 0.9999} {
		exact := zetaExact(n, theta)
		approx := zetaExact(m, theta) + zetaTail(m, n, theta)
		require.InEpsilon(t, exact, approx, 1e-12, "theta %v", theta)
	}
}

func TestZetaLargeKeySpace(t *testing.T) {
	// Past the exact prefix zeta must keep growing smoothly.
	a := zeta(exactZetaTerms, 0.99)
	b := zeta(exactZetaTerms+1, 0.99)
	require.InEpsilon(t, a+math.Pow(exactZetaTerms+1, -0.99), b, 1e-13)
	require.Greater(t, zeta(1e12, 0.99), zeta(1e9, 0.99))
}

func TestCachedZetaConcurrent(t *testing.T) {
	const n, theta = 123_457, 0.8
	want := zetaExact(n, theta)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { require.Equal(t, want, cachedZeta(n, theta)) })
	}
	wg.Wait()
}

func TestZipfRanksInRange(t *testing.T) {
	z := newZipfian(1000, 0.99)
	for _, u := range []float64{0, 0.5, 0.999999, 1 - 1e-16} {
		require.Less(t, z.rank(u), uint64(1000))
	}
	require.Equal(t, uint64(0), z.rank(0))
}

// zipfLaw is Zipf's law over n ranks, rank r (from 0) with probability
// 1/(r+1)^theta normalised, computed independently of the package.
func zipfLaw(n int, theta float64) []float64 {
	law := make([]float64, n)
	sum := 0.0
	for r := n - 1; r >= 0; r-- {
		law[r] = 1 / math.Pow(float64(r+1), theta)
		sum += law[r]
	}
	for r := range law {
		law[r] /= sum
	}
	return law
}

// lawTolerance is how far a rank's share of draws may stray from its
// probability p: five standard deviations, which an exact sampler exceeds
// at one of 50 ranks for roughly one seed in 35,000.
func lawTolerance(p float64, draws int) float64 {
	return 5 * math.Sqrt(p*(1-p)/float64(draws))
}

// lawMismatch returns the first rank whose share of the draws strays from
// law by more than lawTolerance, or -1 if none does.
func lawMismatch(counts []int, law []float64) int {
	draws := 0
	for _, c := range counts {
		draws += c
	}
	for r, p := range law {
		if math.Abs(float64(counts[r])/float64(draws)-p) > lawTolerance(p, draws) {
			return r
		}
	}
	return -1
}

// drawRanks counts draws ranks from z over n ranks.
func drawRanks(z ranker, n, draws int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, seed^seedStream))
	counts := make([]int, n)
	for range draws {
		counts[z.draw(rng)]++
	}
	return counts
}

const lawKeys, lawDraws = 50, 200_000

// TestZipfExactLaw checks every rank's share against Zipf's law, through
// the generator for the skews it draws exactly (1 and above), and on the
// sampler alone below 1, where the generator keeps YCSB's draws.
func TestZipfExactLaw(t *testing.T) {
	for _, theta := range []float64{1, 1.2, 1.5, 2} {
		t.Run(fmt.Sprintf("generator theta=%v", theta), func(t *testing.T) {
			c := DefaultConfig()
			c.KeySpace, c.ZipfSkew, c.Unscrambled = lawKeys, theta, true
			g, err := NewGenerator(c, 11)
			require.NoError(t, err)
			counts := make([]int, lawKeys)
			for range lawDraws {
				counts[g.next().key]++
			}
			law := zipfLaw(lawKeys, theta)
			for r, p := range law {
				requireShare(t, fmt.Sprintf("rank %d", r), counts[r], lawDraws, p)
			}
		})
	}
	for _, theta := range []float64{0, 0.5, 0.99, 1, 1.2, 1.5, 2} {
		t.Run(fmt.Sprintf("sampler theta=%v", theta), func(t *testing.T) {
			counts := drawRanks(newRejectionZipf(lawKeys, theta), lawKeys, lawDraws, 5)
			require.Equal(t, -1, lawMismatch(counts, zipfLaw(lawKeys, theta)), "counts %v", counts)
		})
	}
}

// TestZipfLawCheckRejectsWrongSamplers shows the check above has teeth: a
// sampler with a skew off by 0.05, and YCSB's approximation, fail it.
func TestZipfLawCheckRejectsWrongSamplers(t *testing.T) {
	for _, theta := range []float64{0.6, 1, 1.2, 2} {
		for _, off := range []float64{-0.05, 0.05} {
			counts := drawRanks(newRejectionZipf(lawKeys, theta+off), lawKeys, lawDraws, 5)
			require.NotEqual(t, -1, lawMismatch(counts, zipfLaw(lawKeys, theta)),
				"theta %v drawn at %v passes", theta, theta+off)
		}
	}
	counts := drawRanks(newZipfian(lawKeys, 0.99), lawKeys, lawDraws, 5)
	require.NotEqual(t, -1, lawMismatch(counts, zipfLaw(lawKeys, 0.99)), "YCSB's approximation passes")
}

// TestZipfSqueeze checks the shortcut that accepts a draw without
// evaluating the integral: for every k >= 2, the accepted x reach down at
// least squeeze below k (the draw is accepted when u, or equally x, lies
// at or above the point below).
func TestZipfSqueeze(t *testing.T) {
	ks := make([]float64, 0, 2100)
	for k := 2; k <= 2000; k++ {
		ks = append(ks, float64(k))
	}
	for k := 2e3; k <= 1e7; k *= 1.5 {
		ks = append(ks, math.Floor(k))
	}
	for i := 0; i <= 40; i++ {
		theta := float64(i) / 20
		z := newRejectionZipf(10_000_000, theta)
		for _, k := range ks {
			lowest := z.inverse(z.integral(k+0.5) - z.weight(k))
			require.GreaterOrEqual(t, k-lowest, z.squeeze-1e-12*k, "theta %v k %v", theta, k)
		}
	}
}

// firstThen is a random source that yields first's words, then rest's.
type firstThen struct {
	first []uint64
	rest  rand.Source
}

func (s *firstThen) Uint64() uint64 {
	if len(s.first) > 0 {
		v := s.first[0]
		s.first = s.first[1:]
		return v
	}
	return s.rest.Uint64()
}

func TestZipfRejectionInRange(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 50, 1_000_000, 10_000_000} {
		for _, theta := range []float64{0, 0.5, 1, 1.2, 1.5, 2} {
			z := newRejectionZipf(n, theta)
			// The extremes of Float64, 0 and 1-2^-53, map to the ends of
			// the integral's range: rank n-1 and rank 0.
			for _, word := range []uint64{0, math.MaxUint64} {
				rng := rand.New(&firstThen{first: []uint64{word}, rest: rand.NewPCG(1, 2)})
				require.Less(t, z.draw(rng), n, "n %d theta %v word %x", n, theta, word)
			}
			rng := rand.New(rand.NewPCG(n, math.Float64bits(theta)))
			for range 2000 {
				require.Less(t, z.draw(rng), n, "n %d theta %v", n, theta)
			}
		}
	}
}

// TestZipfSteepPopularKeys checks skews from 1 on over a million keys:
// rank 0's key is the most popular, with about its share, the next ranks
// follow in order, and every key is in the key space.
func TestZipfSteepPopularKeys(t *testing.T) {
	const draws, n = 100_000, 1_000_000
	for _, theta := range []float64{1, 1.2, 2} {
		for _, scrambled := range []bool{true, false} {
			t.Run(fmt.Sprintf("theta=%v scrambled=%v", theta, scrambled), func(t *testing.T) {
				c := DefaultConfig()
				c.ZipfSkew, c.Unscrambled = theta, !scrambled
				g, err := NewGenerator(c, 9)
				require.NoError(t, err)
				counts := make(map[uint64]int)
				for range draws {
					key := g.next().key
					require.Less(t, key, uint64(n))
					counts[key]++
				}
				keyOf := func(r uint64) uint64 {
					if scrambled {
						return scramble(r, n)
					}
					return r
				}
				zetan := theoreticalZeta(n, theta)
				requireShare(t, "rank 0", counts[keyOf(0)], draws, 1/zetan)
				top := 0
				for _, c := range counts {
					top = max(top, c)
				}
				require.Equal(t, top, counts[keyOf(0)], "rank 0's key is the most popular")
				for r := range uint64(3) {
					require.Greater(t, counts[keyOf(r)], counts[keyOf(r+1)], "rank %d against rank %d", r, r+1)
				}
			})
		}
	}
}
