package protocols

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryProtocolHasBothCores: the client cores' list of names and the
// replica cores' must be the same set.
func TestEveryProtocolHasBothCores(t *testing.T) {
	require.ElementsMatch(t, Names(), slices.Collect(maps.Keys(replicas)))
	for _, name := range Names() {
		p, err := Lookup(name)
		require.NoError(t, err)
		require.NotNil(t, p.NewReplica, name)
		require.NotNil(t, p.NewClient, name)
	}
}
