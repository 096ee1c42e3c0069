package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// TestKeysSortAsTheirNumbers: a workload's key names sort bytewise as
// their numbers do, the empty key first, so that a range of names is a
// range of numbers.
func TestKeysSortAsTheirNumbers(t *testing.T) {
	for _, n := range []uint64{1, 2, 6, 10, 11, 64, 100, 101, 1000} {
		names := make([]string, n)
		for i := range n {
			names[i] = Key(i, n)
		}
		require.True(t, slices.IsSorted(names), "n = %d: %q", n, names)
		require.Len(t, slices.Compact(slices.Clone(names)), int(n), "n = %d: names repeat", n)
		require.Equal(t, "", names[0])
	}
}

// inRange reports whether key is in op's range, by etcd's conventions.
func inRange(o *wire.TxnOp, key string) bool {
	switch o.End {
	case "":
		return key == o.Key
	case "\x00":
		return key >= o.Key
	}
	return key >= o.Key && key < o.End
}

// TestDrawnTransactions: the programs a workload draws are valid, have
// 0–2 compares and branches of 1–3 operations whose ranges name 1–3
// consecutive keys of the workload, write each key at most once per
// branch, and put values unique per key; both branches and every kind of
// operation, compare target and range read option come up.
func TestDrawnTransactions(t *testing.T) {
	for _, n := range []uint64{1, 6, 10, 64} {
		g := newTxnGen(rand.New(rand.NewPCG(uint64(n), 1)), n)
		names := make([]string, n)
		for i := range n {
			names[i] = Key(i, n)
		}
		values := map[string]map[string]bool{}
		seen := map[string]int{}
		for seq := range 2000 {
			tx := g.draw(7, seq)
			b := wire.AppendTxn(nil, tx)
			_, err := wire.DecodeTxn(b)
			require.NoError(t, err)
			require.LessOrEqual(t, len(tx.Compares), 2)
			for _, c := range tx.Compares {
				require.Contains(t, names, c.Key)
				seen[[...]string{"value", "version", "create", "mod"}[c.Target]]++
			}
			for _, ops := range [][]wire.TxnOp{tx.Then, tx.Else} {
				require.NotEmpty(t, ops)
				require.LessOrEqual(t, len(ops), 3)
				written := map[string]bool{}
				for _, o := range ops {
					var span []int
					for i, k := range names {
						if inRange(&o, k) {
							span = append(span, i)
						}
					}
					require.NotEmpty(t, span, "%+v names no key of %d", o, n)
					require.LessOrEqual(t, len(span), 3, "%+v", o)
					require.Equal(t, span[len(span)-1]-span[0]+1, len(span), "%+v: not consecutive", o)
					switch o.Kind {
					case wire.Get:
						switch {
						case o.Limit > 0:
							seen["limit"]++
						case o.KeysOnly:
							seen["keys only"]++
						case o.CountOnly:
							seen["count only"]++
						}
						continue
					case wire.Put:
						if values[o.Key] == nil {
							values[o.Key] = map[string]bool{}
						}
						require.False(t, values[o.Key][string(o.Value)], "value %q put twice on %q", o.Value, o.Key)
						values[o.Key][string(o.Value)] = true
					}
					seen[o.Kind.String()]++
					if o.PrevKV {
						seen["prevkv"]++
					}
					for _, i := range span {
						require.False(t, written[names[i]], "a branch writes %q twice", names[i])
						written[names[i]] = true
					}
				}
			}
		}
		for _, what := range []string{"value", "version", "create", "mod", "limit", "keys only", "count only", "put", "delete", "prevkv"} {
			require.Positive(t, seen[what], "n = %d: no %s", n, what)
		}
	}
}
