package guarantees

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStringIsCanonical(t *testing.T) {
	assert.Equal(t, "S1,W1,W2,W3,W4,W5,W6,C1,C2,C3,E1,D1,X1", All.String())
	assert.Equal(t, "S1,W2,C3", (C3 | S1 | W2).String())
	assert.Equal(t, "", Set(0).String())
	assert.Equal(t, 13, All.Len())
	assert.Equal(t, []Set{S1, W2, X1}, (X1 | W2 | S1).Each())
}

func TestParseRoundTrips(t *testing.T) {
	// Every subset of a few guarantees, and some whole ones.
	for _, s := range []Set{0, All, S1, X1, D1, All &^ D1, W1 | W2, S1 | W1 | W2 | W6 | C1 | C3 | E1 | X1} {
		got, err := Parse(s.String())
		require.NoError(t, err, s.String())
		assert.Equal(t, s, got, s.String())
	}
	for m := range Set(1 << 6) {
		s := m&1*S1 | m>>1&1*W3 | m>>2&1*W5 | m>>3&1*C2 | m>>4&1*D1 | m>>5&1*X1
		got, err := Parse(s.String())
		require.NoError(t, err)
		require.Equal(t, s, got, s.String())
	}
}

func TestParseIsLenient(t *testing.T) {
	for text, want := range map[string]Set{
		"w2, s1":    S1 | W2,
		" W1 ":      W1,
		"all":       All,
		"ALL,S1":    All,
		"S1,S1":     S1,
		"  ":        0,
		"e1,d1,x1":  E1 | D1 | X1,
		"C1,C2,C3 ": C1 | C2 | C3,
	} {
		got, err := Parse(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{"S2", "S1,,W1", "S1,", "W7", "S1 W1", "linearizability", "W"} {
		_, err := Parse(text)
		assert.Error(t, err, text)
	}
	_, err := Parse("S1,Z9")
	assert.ErrorContains(t, err, `unknown guarantee "Z9"`)
}

func TestHas(t *testing.T) {
	s := S1 | W1 | W2
	assert.True(t, s.Has(W1))
	assert.True(t, s.Has(S1|W2))
	assert.False(t, s.Has(W3))
	assert.False(t, s.Has(W1|W3), "every guarantee asked for")
	assert.True(t, All.Has(D1))
}

func TestClaimsString(t *testing.T) {
	assert.Equal(t, "S1,W1", Claims{Set: S1 | W1}.String())
	assert.Equal(t, "none", Claims{}.String())
	assert.Contains(t, Claims{Set: All, EarlyStrongVisibility: true}.String(), "early")
}
