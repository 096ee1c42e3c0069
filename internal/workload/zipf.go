package workload

import "math"

// zipfian maps uniform draws to Zipf-distributed ranks in [0, n), rank 0
// the most popular, using the YCSB ZipfianGenerator's constant-time
// formulas (Gray et al. 1994). Rank r is drawn with probability close to
// 1/((r+1)^theta * zeta(n, theta)). Ranks 0 and 1 are exact; the rest come
// from a continuous approximation that, for a million keys at 0.99, draws
// rank 2 about 19% more often than the law says, rank 10 about 3% more and
// the long tail about 1.6% less. That bias is YCSB's too, and keeping it
// keeps results comparable with YCSB-driven benchmarks.
type zipfian struct {
	n      uint64
	theta  float64
	alpha  float64 // 1 / (1 - theta)
	zetan  float64 // zeta(n, theta)
	eta    float64
	second float64 // 1 + 0.5^theta = zeta(2, theta): the cumulative weight of ranks 0 and 1
}

// newZipfian prepares a generator over n >= 1 ranks for 0 < theta < 1.
func newZipfian(n uint64, theta float64) *zipfian {
	zetan := cachedZeta(n, theta)
	zeta2 := 1 + math.Pow(0.5, theta)
	return &zipfian{
		n:      n,
		theta:  theta,
		alpha:  1 / (1 - theta),
		zetan:  zetan,
		eta:    (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/zetan),
		second: zeta2,
	}
}

// rank turns u, uniform in [0, 1), into a rank. For n <= 2 the first two
// branches cover every u, so eta (undefined there) is never used.
func (z *zipfian) rank(u float64) uint64 {
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.second {
		return 1
	}
	// x^alpha as exp(alpha*ln x): math.Pow takes ~200 ns for alpha = 100,
	// this ~20 ns, and the rounding difference is far below one rank.
	r := uint64(float64(z.n) * math.Exp(z.alpha*math.Log(z.eta*u-z.eta+1)))
	// Rounding can land exactly on n for u close to 1.
	return min(r, z.n-1)
}

// FNV-1a 64-bit parameters.
const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
)

// scramble spreads rank over [0, n) the way YCSB's
// ScrambledZipfianGenerator does: FNV-1a over the rank's eight bytes, low
// byte first, modulo n. Popular ranks thus land on unrelated keys. Like
// YCSB's, the map is not a bijection: distinct ranks can share a key, so
// with a large n roughly a third of the keys (1/e) are never drawn and a
// few receive two ranks' traffic; the hottest keys are unaffected in
// practice.
func scramble(rank, n uint64) uint64 {
	h := uint64(fnvOffset64)
	for range 8 {
		h ^= rank & 0xff
		h *= fnvPrime64
		rank >>= 8
	}
	return h % n
}
