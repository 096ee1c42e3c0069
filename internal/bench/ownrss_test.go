package bench

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOwnRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	before := ownRSS()
	require.Positive(t, before)
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = 1
	}
	require.Greater(t, ownRSS(), before+32<<20, "64 MB touched shows in the resident set")
	runtime.KeepAlive(held)
}
