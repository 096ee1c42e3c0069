package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/experiment"
)

func TestExperimentRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `no experiment "nope": want one of t-property, conflict, failure, ycsb, cross, tao, or all`},
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
	require.Len(t, specs, 6)
	one, err := experimentsNamed("cross")
	require.NoError(t, err)
	require.Equal(t, "cross", one[0].Name)
}

// TestExperimentFlagsSayWhatSetupDoes: each experiment's summary gives
// its points as bench commands; parsed as bench would parse them, they
// must make the configuration (and the crash) the experiment runs.
func TestExperimentFlagsSayWhatSetupDoes(t *testing.T) {
	for _, s := range experiment.Specs {
		for _, quick := range []bool{false, true} {
			want := config.Default()
			s.Setup(&want, quick)

			var flags configFlags
			fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
			flags.protocolList = true
			flags.register(fs, true)
			var kills crashFlags
			kills.registerOn(fs)
			require.NoError(t, fs.Parse(strings.Fields(s.Flags(quick))), "%s quick=%v", s.Name, quick)
			got, err := flags.load(fs)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s quick=%v: %s", s.Name, quick, s.Flags(quick))

			crash, err := kills.crash()
			require.NoError(t, err)
			if s.Crash == nil {
				require.Nil(t, crash, s.Name)
			} else {
				require.Equal(t, s.Crash(quick), crash, "%s quick=%v", s.Name, quick)
			}
		}
	}
}
