package stats

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestClassOf(t *testing.T) {
	tests := []struct {
		level  wire.Level
		kind   wire.OpKind
		want   Class
		name   string
		strong bool
	}{
		{wire.Strong, wire.Put, StrongWrite, "strong-write", true},
		{wire.Strong, wire.Get, StrongRead, "strong-read", true},
		{wire.Weak, wire.Put, WeakWrite, "weak-write", false},
		{wire.Weak, wire.Get, WeakRead, "weak-read", false},
		{wire.Strong, wire.Scan, StrongScan, "strong-scan", true},
		{wire.Weak, wire.Scan, WeakScan, "weak-scan", false},
		{wire.Strong, wire.Txn, StrongWrite, "strong-write", true},
		{wire.Weak, wire.Delete, WeakWrite, "weak-write", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ClassOf(tt.level, tt.kind)
			require.Equal(t, tt.want, c)
			require.Equal(t, tt.name, c.String())
			require.Equal(t, tt.strong, c.IsStrong())
			require.Equal(t, tt.kind == wire.Scan, c.IsScan())
		})
	}
	require.Equal(t, "class(9)", Class(9).String())
	for i, c := range Classes() {
		require.Equal(t, Class(i), c, "Classes is indexed by value")
	}
}
