package checker

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMinTreeFindsTheFirstBelow compares minTree.next with a linear scan
// on random sequences of every length up to 70.
func TestMinTreeFindsTheFirstBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 70; n++ {
		values := make([]int64, n)
		for i := range values {
			values[i] = rng.Int64N(100)
		}
		tree := newMinTree(values)
		for p := 0; p <= n+1; p++ {
			for _, x := range []int64{0, 1, 10, 50, 99, 100, 1000} {
				want := -1
				for i := p; i < n; i++ {
					if values[i] < x {
						want = i
						break
					}
				}
				require.Equal(t, want, tree.next(p, x), "n=%d p=%d x=%d", n, p, x)
			}
		}
	}
}
