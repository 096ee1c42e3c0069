package workload

import (
	"math"
	"sync"
)

// exactZetaTerms is how many terms of zeta are summed one by one; beyond it
// the tail is integrated. Summing costs a math.Pow per term (about 20 ms per
// million), so without the cut-off a billion-key space would take half a
// minute to set up, while the Euler–Maclaurin tail past a million terms is
// accurate to well below float64 rounding.
const exactZetaTerms = 1 << 20

// zeta returns the generalised harmonic number sum_{i=1..n} 1/i^theta.
func zeta(n uint64, theta float64) float64 {
	if n <= exactZetaTerms {
		return zetaExact(n, theta)
	}
	return zetaExact(exactZetaTerms, theta) + zetaTail(exactZetaTerms, n, theta)
}

// zetaExact sums the terms smallest first, so the large leading terms do not
// swallow the many tiny ones.
func zetaExact(n uint64, theta float64) float64 {
	sum := 0.0
	for i := n; i >= 1; i-- {
		sum += math.Pow(float64(i), -theta)
	}
	return sum
}

// zetaTail approximates sum_{i=m+1..n} 1/i^theta for 0 <= theta < 1 by the
// Euler–Maclaurin formula with f(x) = x^-theta: the integral from m to n,
// plus (f(n)-f(m))/2, plus (f'(n)-f'(m))/12. The next correction is of
// order m^-(theta+3), negligible for the m used here.
func zetaTail(m, n uint64, theta float64) float64 {
	fm, fn := float64(m), float64(n)
	// The integral (n^(1-theta) - m^(1-theta)) / (1-theta), written with
	// Expm1 so that it stays exact as theta approaches 1.
	s := 1 - theta
	integral := math.Pow(fm, s) * math.Expm1(s*math.Log(fn/fm)) / s
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	df := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	return integral + (f(fn)-f(fm))/2 + (df(fn)-df(fm))/12
}

// zetaKey identifies one cached zeta value.
type zetaKey struct {
	n     uint64
	theta float64
}

// zetaEntry lets the first session to ask compute the value while the
// others wait for it, instead of all of them computing it at once.
type zetaEntry struct {
	once  sync.Once
	value float64
}

// zetaCache holds zeta(n, theta) for every (n, theta) asked for; a run uses
// one or two, so it never needs evicting.
var zetaCache sync.Map // zetaKey -> *zetaEntry

// cachedZeta returns zeta(n, theta), computing it once per process.
func cachedZeta(n uint64, theta float64) float64 {
	v, _ := zetaCache.LoadOrStore(zetaKey{n, theta}, new(zetaEntry))
	e := v.(*zetaEntry)
	e.once.Do(func() { e.value = zeta(n, theta) })
	return e.value
}
