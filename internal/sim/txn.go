package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// txnGen draws the programs of a workload's transactions over its keys
// (see Workload.TxnRatio).
type txnGen struct {
	rand *rand.Rand
	keys uint64
	// written holds, per key index, the values the workload's puts were
	// submitted with so far, transactions' included, oldest first: a value
	// compare names one of the latest, which the key may well hold.
	written map[uint64][][]byte
}

func newTxnGen(r *rand.Rand, keys uint64) *txnGen {
	return &txnGen{rand: r, keys: keys, written: make(map[uint64][][]byte)}
}

// wrote notes a put of value to key i.
func (g *txnGen) wrote(i uint64, value []byte) {
	g.written[i] = append(g.written[i], value)
}

// draw returns a program: 0–2 compares, and a then and an else branch of
// 1–3 operations each (range reads, puts and range deletes over a few
// consecutive keys). Each put writes a value unique to its key, made of
// session, seq (the operation's number in its session) and its place in
// the program, as the checker requires; no branch writes a key twice, as
// wire.Transaction.Validate requires.
func (g *txnGen) draw(session uint64, seq int) *wire.Transaction {
	t := &wire.Transaction{}
	for range g.rand.IntN(3) {
		t.Compares = append(t.Compares, g.compare())
	}
	nth := 0
	value := func() []byte {
		nth++
		return fmt.Appendf(nil, "%x/%d.%d", session, seq, nth)
	}
	t.Then = g.branch(value)
	t.Else = g.branch(value)
	if err := t.Validate(); err != nil {
		panic(fmt.Sprintf("sim: drew an invalid transaction: %v", err))
	}
	return t
}

// compare draws a compare on one key: its value equal (or not) to one of
// the latest values written to it or to the empty one, or its version, or
// its create or mod slot, against 0 or a small number.
func (g *txnGen) compare() wire.Compare {
	i := g.rand.Uint64N(g.keys)
	c := wire.Compare{Key: Key(i, g.keys)}
	switch g.rand.IntN(4) {
	case 0:
		c.Target = wire.CompareValue
		c.Result = [...]wire.CompareResult{wire.Equal, wire.Equal, wire.NotEqual}[g.rand.IntN(3)]
		if vs := g.written[i]; len(vs) > 0 && g.rand.IntN(4) > 0 {
			c.Value = vs[len(vs)-1-g.rand.IntN(min(len(vs), 3))]
		}
	case 1:
		c.Target = wire.CompareVersion
		c.Result = wire.CompareResult(g.rand.IntN(4))
		c.Number = g.rand.Uint64N(4)
	default:
		c.Target = [...]wire.CompareTarget{wire.CompareCreate, wire.CompareMod}[g.rand.IntN(2)]
		c.Result = wire.CompareResult(g.rand.IntN(4))
		if g.rand.IntN(2) == 0 {
			c.Number = 1 + g.rand.Uint64N(32)
		}
	}
	return c
}

// branch draws 1–3 operations. A write of a key the branch already wrote
// becomes a range read of the same keys.
func (g *txnGen) branch(value func() []byte) []wire.TxnOp {
	ops := make([]wire.TxnOp, 1+g.rand.IntN(3))
	written := make(map[uint64]bool)
	for j := range ops {
		o := &ops[j]
		kind := g.rand.IntN(3)
		first, last := g.span()
		if kind == 1 {
			last = first
		}
		if kind > 0 {
			for i := first; i <= last; i++ {
				if written[i] {
					kind = 0
				}
			}
		}
		o.Key, o.End = Key(first, g.keys), g.end(first, last)
		switch kind {
		case 0:
			o.Kind = wire.Get
			switch g.rand.IntN(6) {
			case 0:
				o.Limit = 1 + g.rand.Uint64N(last-first+1)
			case 1:
				o.KeysOnly = true
			case 2:
				o.CountOnly = true
			}
			continue
		case 1:
			o.Kind, o.Value = wire.Put, value()
			g.wrote(first, o.Value)
		case 2:
			o.Kind = wire.Delete
		}
		o.PrevKV = g.rand.IntN(2) == 0
		for i := first; i <= last; i++ {
			written[i] = true
		}
	}
	return ops
}

// scan draws the range read of a scan: any run of consecutive keys, a
// third of the time cut by a limit below its length, now and then keys or
// a count only.
func (g *txnGen) scan() wire.TxnOp {
	first := g.rand.Uint64N(g.keys)
	last := first + g.rand.Uint64N(g.keys-first)
	o := wire.TxnOp{Kind: wire.Get, Key: Key(first, g.keys), End: g.end(first, last)}
	switch g.rand.IntN(9) {
	case 0, 1, 2:
		o.Limit = 1 + g.rand.Uint64N(last-first+1)
	case 3:
		o.KeysOnly = true
	case 4:
		o.CountOnly = true
	}
	return o
}

// span draws 1–3 consecutive keys' indexes, the last one included, within
// the workload's keys.
func (g *txnGen) span() (first, last uint64) {
	first = g.rand.Uint64N(g.keys)
	return first, min(first+g.rand.Uint64N(3), g.keys-1)
}

// end returns the range end that names keys first to last: none for one
// key, Key(last+1) below the last key, "\x00" (every key from the start)
// when last is the last key, where Key(g.keys) would not sort after it
// (its digits may be one more).
func (g *txnGen) end(first, last uint64) string {
	switch {
	case first == last:
		return ""
	case last == g.keys-1:
		return wire.NoEnd
	}
	return Key(last+1, g.keys)
}
