package workload

import (
	"math"
	"math/rand/v2"
)

// MaxZipfSkew is the steepest skew the generator draws. Past 2 almost
// every draw is one of the first few keys, which a conflict rate
// describes better than a skew.
const MaxZipfSkew = 2.0

// ranker draws Zipf-distributed ranks in [0, n), rank 0 the most popular.
type ranker interface {
	draw(rng *rand.Rand) uint64
}

// newRanker picks the sampler for 0 < theta <= MaxZipfSkew: below 1
// YCSB's, so that results stay comparable with YCSB-driven benchmarks,
// and from 1 on, where YCSB's formulas divide by zero or go negative, an
// exact rejection-inversion sampler.
func newRanker(n uint64, theta float64) ranker {
	if theta < 1 {
		return newZipfian(n, theta)
	}
	return newRejectionZipf(n, theta)
}

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

func (z *zipfian) draw(rng *rand.Rand) uint64 { return z.rank(rng.Float64()) }

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

// rejectionZipf draws ranks with exactly Zipf's law, rank r with
// probability 1/((r+1)^theta * zeta(n, theta)), by rejection-inversion
// (Hörmann and Derflinger, "Rejection-inversion to generate variates from
// monotone discrete distributions", 1996). It holds no table and needs no
// zeta, so setting one up is free for any key space, and works for every
// theta >= 0, 1 included. A draw inverts one integral; for theta up to 2
// at most about 1.4% of draws are rejected and repeated.
//
// In the numbering 1..n of the method, the weight of k is h(k) = k^-theta.
// Each k >= 2 owns the interval [H(k-1/2), H(k+1/2)] of the integral H of
// h, which is at least h(k) wide since h is convex; k = 1 owns
// [H(3/2)-1, H(3/2)], exactly h(1) wide. A point u uniform over the
// union maps back to x = H^-1(u) and to the k nearest x, accepted if u
// lies in the last h(k) of k's interval: every k is then accepted with
// probability proportional to h(k).
type rejectionZipf struct {
	n     float64 // the number of ranks, as a float for the arithmetic
	theta float64
	// hLow and hHigh bound the interval u is drawn from: H(3/2)-1 and
	// H(n+1/2).
	hLow, hHigh float64
	// squeeze accepts k without evaluating H when k - x <= squeeze: the
	// acceptance region of every k >= 2 reaches at least that far below
	// k, and the one of k = 2 exactly that far.
	squeeze float64
}

// newRejectionZipf prepares a sampler over n >= 1 ranks for theta >= 0.
func newRejectionZipf(n uint64, theta float64) *rejectionZipf {
	z := &rejectionZipf{n: float64(n), theta: theta}
	z.hLow = z.integral(1.5) - 1
	z.hHigh = z.integral(z.n + 0.5)
	z.squeeze = 2 - z.inverse(z.integral(2.5)-z.weight(2))
	return z
}

func (z *rejectionZipf) draw(rng *rand.Rand) uint64 {
	for {
		// Float64 is in [0, 1), so u runs from hHigh down to just above
		// hLow: x never passes n+1/2.
		u := z.hHigh + rng.Float64()*(z.hLow-z.hHigh)
		x := z.inverse(u)
		k := min(max(math.Floor(x+0.5), 1), z.n)
		if k-x <= z.squeeze || u >= z.integral(k+0.5)-z.weight(k) {
			return uint64(k) - 1
		}
	}
}

// weight is h(x) = x^-theta.
func (z *rejectionZipf) weight(x float64) float64 { return math.Exp(-z.theta * math.Log(x)) }

// integral is H(x) = (x^(1-theta) - 1) / (1-theta), which is ln x at
// theta = 1; written as ln x * expm1(t)/t with t = (1-theta) ln x, so it
// has no pole at 1 and loses no precision near it.
func (z *rejectionZipf) integral(x float64) float64 {
	lx := math.Log(x)
	return lx * expm1Ratio((1-z.theta)*lx)
}

// inverse is H^-1(y) = (1 + (1-theta) y)^(1/(1-theta)), which is e^y at
// theta = 1; written as exp(y * log1p(t)/t) with t = (1-theta) y.
func (z *rejectionZipf) inverse(y float64) float64 {
	return math.Exp(y * log1pRatio((1-z.theta)*y))
}

// expm1Ratio is expm1(t)/t, continued to 1 at t = 0. Below the cut-off
// the quotient would lose digits and the series' terms left out are under
// 1e-25.
func expm1Ratio(t float64) float64 {
	if math.Abs(t) < 1e-8 {
		return 1 + t/2*(1+t/3)
	}
	return math.Expm1(t) / t
}

// log1pRatio is log1p(t)/t, continued to 1 at t = 0, for t > -1; the
// cut-off is expm1Ratio's.
func log1pRatio(t float64) float64 {
	if math.Abs(t) < 1e-8 {
		return 1 - t/2*(1-2*t/3)
	}
	return math.Log1p(t) / t
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
