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
	// ycsb is the core workload drawn, nil for the write shares above;
	// weakKinds are the kinds of its operations that may be weak.
	ycsb      *ycsbMix
	weakKinds weakKinds
	// inserted counts this session's inserts; insertStride and
	// insertOffset place them (see Config).
	inserted, insertStride, insertOffset uint64
}

// Op is one operation of a session.
type Op struct {
	Kind  wire.OpKind
	Level wire.Level
	Key   string
	// ReadModifyWrite makes the operation YCSB's read-modify-write: the
	// session reads Key and, once answered, writes it (Kind is then Get).
	ReadModifyWrite bool
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
		rng:          rand.New(rand.NewPCG(seed, seed^seedStream)),
		writes:       c.Writes / 100,
		weak:         c.WeakRatio / 100,
		weakWrites:   c.WeakWrites / 100,
		conflicts:    c.Conflicts / 100,
		keySpace:     c.KeySpace,
		hotKey:       c.HotKey,
		scrambled:    !c.Unscrambled,
		template:     newTemplate(c.ValueSize),
		names:        NewKeyNames(c.KeyPrefix, c.KeySpace),
		insertStride: max(c.InsertStride, 1),
		insertOffset: c.InsertOffset,
	}
	if m, ok := ycsbMixes[c.YCSB]; ok {
		g.ycsb = &m
		g.weakKinds = newWeakKinds(c.YCSBWeak)
	}
	if c.ZipfSkew > 0 {
		g.zipf = newZipfian(c.KeySpace, c.ZipfSkew)
	}
	return g, nil
}

// Next draws the next operation: its kind, its level and its key, named
// by KeyNames.
func (g *Generator) Next() Op {
	op := g.next()
	return Op{Kind: op.kind, Level: op.level, Key: g.names.Name(op.key), ReadModifyWrite: op.rmw}
}

// drawn is an operation with its key's number.
type drawn struct {
	kind  wire.OpKind
	level wire.Level
	key   uint64
	rmw   bool
}

// next draws the next operation with its key's number.
func (g *Generator) next() drawn {
	level, writes := wire.Strong, g.writes
	if g.chance(g.weak) {
		level, writes = wire.Weak, g.weakWrites
	}
	if g.ycsb != nil {
		return g.nextYCSB(level)
	}
	kind := wire.Get
	if g.chance(writes) {
		kind = wire.Put
	}
	return drawn{kind: kind, level: level, key: g.key()}
}

// nextYCSB draws the kind of operation from the core workload's shares: a
// read, an update of a key of the key space, an insert of a new key, or a
// read-modify-write. An operation drawn weak whose kind may not be weak
// runs strong.
func (g *Generator) nextYCSB(level wire.Level) drawn {
	d, kind := g.drawYCSB()
	d.level = level
	if level == wire.Weak && !g.weakKinds.allows(kind) {
		d.level = wire.Strong
	}
	return d
}

// drawYCSB draws a YCSB operation's kind and key; kind names the kind as
// YCSBKinds does.
func (g *Generator) drawYCSB() (drawn, string) {
	m := g.ycsb
	u := g.rng.Float64()
	switch {
	case u < m.insert:
		key := g.keySpace + g.inserted*g.insertStride + g.insertOffset
		g.inserted++
		return drawn{kind: wire.Put, key: key}, YCSBInsert
	case u < m.insert+m.update:
		return drawn{kind: wire.Put, key: g.key()}, YCSBUpdate
	case u < m.insert+m.update+m.readModifyWrite:
		return drawn{kind: wire.Get, key: g.key(), rmw: true}, YCSBReadModifyWrite
	case m.latest:
		return drawn{kind: wire.Get, key: g.latestKey()}, YCSBRead
	}
	return drawn{kind: wire.Get, key: g.key()}, YCSBRead
}

// latestKey draws a key skewed towards the newest inserts, as YCSB's
// "latest" distribution does: the rank drawn from the Zipfian counts back
// from the newest key. Every session inserts at about the same rate, so
// this session's inserts stand for everyone's: the newest key is taken to
// be the last of its stride of sessions' latest round.
func (g *Generator) latestKey() uint64 {
	if g.chance(g.conflicts) {
		return g.hotKey
	}
	newest := g.keySpace + g.inserted*g.insertStride
	var r uint64
	if g.zipf == nil {
		r = g.rng.Uint64N(g.keySpace)
	} else {
		r = g.zipf.rank(g.rng.Float64())
	}
	return newest - 1 - r
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
