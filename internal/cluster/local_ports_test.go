package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A port drawn twice is handed out once: the first replica has not bound
// it yet when the second draw finds it free.
func TestFreeAddrNeverRepeats(t *testing.T) {
	draws := []int{portsTo - 1, portsTo - 1, portsTo - 2}
	saved := pickPort
	t.Cleanup(func() { pickPort = saved })
	pickPort = func() int {
		p := draws[0]
		if len(draws) > 1 {
			draws = draws[1:]
		}
		return p
	}
	a, err := freeAddr()
	require.NoError(t, err)
	b, err := freeAddr()
	require.NoError(t, err)
	require.NotEqual(t, a, b)
}
