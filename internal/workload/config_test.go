package workload

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		field  string // "" when the config is valid
	}{
		{"default", func(*Config) {}, ""},
		{"all percentages zero", func(c *Config) { c.Writes, c.WeakRatio, c.WeakWrites, c.Conflicts = 0, 0, 0, 0 }, ""},
		{"all percentages 100", func(c *Config) { c.Writes, c.WeakRatio, c.WeakWrites, c.Conflicts = 100, 100, 100, 100 }, ""},
		{"fractional percentage", func(c *Config) { c.Writes = 0.5 }, ""},
		{"uniform", func(c *Config) { c.ZipfSkew = 0 }, ""},
		{"one key", func(c *Config) { c.KeySpace = 1 }, ""},
		{"hot key is the last key", func(c *Config) { c.HotKey = c.KeySpace - 1 }, ""},
		{"smallest value", func(c *Config) { c.ValueSize = MinValueSize }, ""},
		{"largest value", func(c *Config) { c.ValueSize = MaxValueSize }, ""},
		{"negative writes", func(c *Config) { c.Writes = -1 }, "Writes"},
		{"weak ratio above 100", func(c *Config) { c.WeakRatio = 100.5 }, "WeakRatio"},
		{"NaN weak writes", func(c *Config) { c.WeakWrites = math.NaN() }, "WeakWrites"},
		{"infinite conflicts", func(c *Config) { c.Conflicts = math.Inf(1) }, "Conflicts"},
		{"empty key space", func(c *Config) { c.KeySpace = 0 }, "KeySpace"},
		{"hot key outside key space", func(c *Config) { c.HotKey = c.KeySpace }, "HotKey"},
		{"negative skew", func(c *Config) { c.ZipfSkew = -0.1 }, "ZipfSkew"},
		{"skew 1", func(c *Config) { c.ZipfSkew = 1 }, ""},
		{"the seeds' skew 1.01", func(c *Config) { c.ZipfSkew = 1.01 }, ""},
		{"the steepest skew", func(c *Config) { c.ZipfSkew = MaxZipfSkew }, ""},
		{"skew above the steepest", func(c *Config) { c.ZipfSkew = 2.01 }, "ZipfSkew"},
		{"infinite skew", func(c *Config) { c.ZipfSkew = math.Inf(1) }, "ZipfSkew"},
		{"NaN skew", func(c *Config) { c.ZipfSkew = math.NaN() }, "ZipfSkew"},
		{"value too small for the identity", func(c *Config) { c.ValueSize = MinValueSize - 1 }, "ValueSize"},
		{"value too large", func(c *Config) { c.ValueSize = MaxValueSize + 1 }, "ValueSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.modify(&c)
			err := c.Validate()
			if tt.field == "" {
				require.NoError(t, err)
				_, err := NewGenerator(c, 1)
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.field+":")
			_, err = NewGenerator(c, 1)
			require.Error(t, err)
		})
	}
}

func TestValidateReportsEveryField(t *testing.T) {
	c := Config{Writes: -1, WeakRatio: 101, ZipfSkew: 2.5}
	err := c.Validate()
	require.Error(t, err)
	for _, field := range []string{"Writes:", "WeakRatio:", "KeySpace:", "ZipfSkew:", "ValueSize:"} {
		require.Contains(t, err.Error(), field)
	}
	require.NotContains(t, err.Error(), "WeakWrites:")
}
