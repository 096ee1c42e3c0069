package witness

import (
	"testing"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// BenchmarkPoolSessionTraffic is a witness's steady state under a
// pipelined benchmark: 96 sessions, each with 30 operations pooled (15 in
// flight and those not yet applied here), one in ten a write; every
// operation is added, its session's records are looked at (CURP-HO
// annotates each reply with the session's pooled weak writes) and its
// session's oldest record leaves (applied).
func BenchmarkPoolSessionTraffic(b *testing.B) {
	const sessions, depth = 96, 30
	p := New()
	next := make([]uint64, sessions)
	opAt := func(s int, seq uint64) *wire.Op {
		kind := wire.Get
		if seq%10 == 0 {
			kind = wire.Put
		}
		o := op(uint64(s+1), seq, (uint64(s)*7919+seq*104729)%100_000, kind)
		o.Level = wire.Weak
		return o
	}
	for s := range sessions {
		for range depth {
			next[s]++
			p.Add(opAt(s, next[s]), 0)
		}
	}
	writes := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s := i % sessions
		next[s]++
		p.Add(opAt(s, next[s]), 0)
		p.Session(uint64(s+1), func(r *Record) {
			if r.Op.Kind.IsWrite() {
				writes++
			}
		})
		p.Remove(wire.OpID{Session: uint64(s + 1), Seq: next[s] - depth})
	}
	if p.Len() != sessions*depth || writes == 0 {
		b.Fatalf("pool holds %d records, saw %d writes", p.Len(), writes)
	}
}
