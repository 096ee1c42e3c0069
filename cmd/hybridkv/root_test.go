package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// benchFlags parses args as bench's flags and loads the configuration.
func benchFlags(t *testing.T, args string) error {
	t.Helper()
	var flags configFlags
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	flags.register(fs, true)
	require.NoError(t, fs.Parse(strings.Fields(args)))
	_, err := flags.load(fs)
	return err
}

// TestMixRefusesWhatItFixes: a mix fixes every operation's kind and
// level, so a flag that would set them is refused rather than ignored,
// whether the mix comes from --mix or from the configuration file; the
// key space and skew stay the ordinary flags.
func TestMixRefusesWhatItFixes(t *testing.T) {
	require.NoError(t, benchFlags(t, "--mix tao --keys 1000000 --zipf 0.8 --conflicts 1 --preload"))
	for _, flag := range mixFixes {
		value := "10"
		if strings.HasPrefix(flag, "ycsb") {
			value = "read"
		}
		err := benchFlags(t, "--mix tao --"+flag+" "+value)
		require.ErrorContains(t, err, "--"+flag+": the tao mix fixes every operation's kind and level")
	}
	file := filepath.Join(t.TempDir(), "tao.yaml")
	require.NoError(t, os.WriteFile(file, []byte("bench: {mix: tao}\n"), 0o644))
	require.ErrorContains(t, benchFlags(t, "--config "+file+" --weak-ratio 20"), "--weak-ratio: the tao mix")
	require.NoError(t, benchFlags(t, "--config "+file+" --keys 5000"))
	require.ErrorContains(t, benchFlags(t, "--mix linkbench"), `bench.mix: "linkbench" is not one of tao`)
}
