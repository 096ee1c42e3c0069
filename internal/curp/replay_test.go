package curp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

func entries(seqs ...uint64) []witness.Entry {
	var es []witness.Entry
	for _, s := range seqs {
		es = append(es, witness.Entry{Op: wire.Op{ID: wire.OpID{Session: 1, Seq: s}}})
	}
	return es
}

func seqs(es []witness.Entry) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, e.Op.ID.Seq)
	}
	return out
}

func TestReplayOrder(t *testing.T) {
	tests := []struct {
		name      string
		lists     [][]witness.Entry
		threshold int
		want      []uint64
	}{
		{"below the threshold is left out", [][]witness.Entry{entries(1, 2), entries(2)}, 2, []uint64{2}},
		// The first witness never saw 5; its first record is 9. Every
		// witness that saw both recorded 5 before 9.
		{"a later first appearance still goes first if recorded first",
			[][]witness.Entry{entries(9), entries(5, 9), entries(5, 9)}, 2, []uint64{5, 9}},
		{"chains across witnesses", [][]witness.Entry{entries(3, 4), entries(2, 3), entries(1, 2)}, 1, []uint64{1, 2, 3, 4}},
		{"disagreement: the first witness decides", [][]witness.Entry{entries(1, 2), entries(2, 1)}, 2, []uint64{1, 2}},
		{"a longer cycle ends at the earliest-seen", [][]witness.Entry{entries(1, 2), entries(2, 3), entries(3, 1)}, 1, []uint64{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, seqs(replayOrder(tt.lists, tt.threshold)))
		})
	}
}
