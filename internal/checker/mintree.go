package checker

import "math"

// minTree answers "the first position at or after p whose value is below
// x" over a fixed sequence in O(log n): a read's writes logged after the
// one it read are few, but the key's writes in slot order go on to the
// end of the history, and a write logged long after it was invoked (a
// retry) may come anywhere among them.
type minTree struct {
	size int
	min  []int64 // min[1] the root; leaves from size on
}

func newMinTree(values []int64) *minTree {
	size := 1
	for size < len(values) {
		size *= 2
	}
	t := &minTree{size: size, min: make([]int64, 2*size)}
	for i := range t.min {
		t.min[i] = math.MaxInt64
	}
	copy(t.min[size:], values)
	for i := size - 1; i >= 1; i-- {
		t.min[i] = min(t.min[2*i], t.min[2*i+1])
	}
	return t
}

// next returns the first position >= p whose value is below x, or -1.
func (t *minTree) next(p int, x int64) int {
	if p >= t.size {
		return -1
	}
	return t.find(1, 0, t.size, p, x)
}

// find searches node i, which covers [lo, hi).
func (t *minTree) find(i, lo, hi, p int, x int64) int {
	if hi <= p || t.min[i] >= x {
		return -1
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) / 2
	if r := t.find(2*i, lo, mid, p, x); r >= 0 {
		return r
	}
	return t.find(2*i+1, mid, hi, p, x)
}
