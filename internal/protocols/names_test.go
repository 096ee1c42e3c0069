package protocols

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/clientcores"
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

// TestCheckOptionsTakeTheClaims: a history is checked against what its
// protocol claims, and only CURP-HO's strong reads may see weak writes
// early.
func TestCheckOptionsTakeTheClaims(t *testing.T) {
	for _, name := range Names() {
		o, err := CheckOptions(name)
		require.NoError(t, err)
		c, err := clientcores.Lookup(name)
		require.NoError(t, err)
		require.Equal(t, c.Claims, o.Claims, name)
		require.NotZero(t, o.Claims.Set, name)
		require.Equal(t, name == "curp-ho", o.Claims.EarlyStrongVisibility, name)
	}
	_, err := CheckOptions("paxos")
	require.Error(t, err)
}
