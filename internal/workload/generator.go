package workload

import (
	"math/rand/v2"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Generator draws the operations of one session. It is not safe for
// concurrent use; give each session its own, with its own seed. Two
// generators with the same configuration and seed produce the same
// operations.
type Generator struct {
	rng *rand.Rand
	// Percentages turned into probabilities once, so Next only compares.
	writes, weak, weakWrites, conflicts float64
	keySpace                            uint64
	hotKey                              uint64
	zipf                                *zipfian // nil: keys are uniform
	scrambled                           bool
	template                            []byte // a value with a zero identity
	names                               *KeyNames
}

// seedStream is mixed into the second PCG word so that a single seed
// still fills both halves of the generator's state differently.
const seedStream = 0x9e3779b97f4a7c15

// NewGenerator validates c and returns a generator seeded with seed. With a
// Zipfian skew the first generator for a given key space and skew pays for
// computing zeta (milliseconds for a million keys); later ones reuse it.
func NewGenerator(c Config, seed uint64) (*Generator, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g := &Generator{
		rng:        rand.New(rand.NewPCG(seed, seed^seedStream)),
		writes:     c.Writes / 100,
		weak:       c.WeakRatio / 100,
		weakWrites: c.WeakWrites / 100,
		conflicts:  c.Conflicts / 100,
		keySpace:   c.KeySpace,
		hotKey:     c.HotKey,
		scrambled:  !c.Unscrambled,
		template:   newTemplate(c.ValueSize),
		names:      NewKeyNames(c.KeySpace),
	}
	if c.ZipfSkew > 0 {
		g.zipf = newZipfian(c.KeySpace, c.ZipfSkew)
	}
	return g, nil
}

// Next draws the next operation: its kind, its level and its key, named
// by KeyNames.
func (g *Generator) Next() (wire.OpKind, wire.Level, string) {
	kind, level, key := g.next()
	return kind, level, g.names.Name(key)
}

// next draws the next operation with its key's number.
func (g *Generator) next() (kind wire.OpKind, level wire.Level, key uint64) {
	level, writes := wire.Strong, g.writes
	if g.chance(g.weak) {
		level, writes = wire.Weak, g.weakWrites
	}
	kind = wire.Get
	if g.chance(writes) {
		kind = wire.Put
	}
	return kind, level, g.key()
}

// chance reports true with probability p. Float64 is in [0, 1), so p = 0
// never and p = 1 always holds.
func (g *Generator) chance(p float64) bool { return g.rng.Float64() < p }

// key draws a key: the hot key for a conflicting operation, otherwise one
// from the configured distribution.
func (g *Generator) key() uint64 {
	if g.chance(g.conflicts) {
		return g.hotKey
	}
	if g.zipf == nil {
		return g.rng.Uint64N(g.keySpace)
	}
	r := g.zipf.rank(g.rng.Float64())
	if g.scrambled {
		return scramble(r, g.keySpace)
	}
	return r
}
