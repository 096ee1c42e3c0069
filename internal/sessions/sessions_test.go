package sessions

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestAckedBelow(t *testing.T) {
	tab := New()
	require.Zero(t, tab.AckedBelow(9), "unknown session")
	a, b, c := tab.Start(9), tab.Start(9), tab.Start(9)
	require.Equal(t, wire.OpID{Session: 9, Seq: 1}, a)
	require.Equal(t, uint64(1), tab.AckedBelow(9))
	tab.Finish(b)
	require.Equal(t, uint64(1), tab.AckedBelow(9), "an earlier op still in flight")
	tab.Finish(a)
	require.Equal(t, uint64(3), tab.AckedBelow(9))
	tab.Hold(a)
	require.Equal(t, uint64(1), tab.AckedBelow(9), "a held op counts again")
	tab.Finish(a)
	tab.Finish(c)
	require.Equal(t, uint64(4), tab.AckedBelow(9), "none in flight: the next number")
}
