package clientcores

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/guarantees"
)

// Every protocol declares what it claims: a non-empty set of guarantees
// and how its weak writes become durable.
func TestEveryProtocolDeclaresItsClaims(t *testing.T) {
	for _, name := range Names() {
		p, err := Lookup(name)
		require.NoError(t, err)
		assert.NotZero(t, p.Claims.Set, name)
		assert.Equal(t, p.Claims.Set, p.Claims.Set&guarantees.All, name)
		assert.NotEmpty(t, p.Claims.WeakWriteDurability, name)
	}
}

// The protocols built so far claim every guarantee; only CURP-HO lets a
// strong read see a weak write early.
func TestClaimsOfTheExistingProtocols(t *testing.T) {
	for _, name := range []string{"curp", "curp-ht", "curp-ho", "raft"} {
		p, err := Lookup(name)
		require.NoError(t, err)
		assert.Equal(t, guarantees.All, p.Claims.Set, name)
		assert.Equal(t, name == "curp-ho", p.Claims.EarlyStrongVisibility, name)
	}
}
