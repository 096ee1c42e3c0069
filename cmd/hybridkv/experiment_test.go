package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExperimentRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `no experiment "nope": want one of t-property, conflict, failure, ycsb, cross, or all`},
		{[]string{"conflict", "--protocol", "paxos"}, "--protocol"},
		{[]string{}, "accepts 1 arg"},
	} {
		cmd := newExperimentCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append(tc.args, "--out", t.TempDir()))
		require.ErrorContains(t, cmd.Execute(), tc.want, "%v", tc.args)
	}
}

func TestExperimentsNamedAll(t *testing.T) {
	specs, err := experimentsNamed("all")
	require.NoError(t, err)
	require.Len(t, specs, 5)
	one, err := experimentsNamed("cross")
	require.NoError(t, err)
	require.Equal(t, "cross", one[0].Name)
}
