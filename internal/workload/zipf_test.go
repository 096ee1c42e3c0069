package workload

import (
	"math"
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
