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
	zipf                                ranker // nil: keys are uniform
	scrambled                           bool
	template                            []byte // a value with a zero identity
	names                               *KeyNames
	// ycsb is the core workload drawn, nil for the write shares above;
	// weakKinds are the kinds of its operations that may be weak.
	ycsb      *ycsbMix
	weakKinds weakKinds
	// mix, when set, draws each operation's kind and level instead of
	// the shares above and ycsb.
	mix *levelMix
	// inserted counts this session's inserts; insertStride and
	// insertOffset place them (see Config).
	inserted, insertStride, insertOffset uint64
}

// Op is one operation of a session.
type Op struct {
	Kind  wire.OpKind
	Level wire.Level
	// Key is the key, or a scan's first key.
	Key string
	// End and Limit complete a scan (Kind wire.Scan), a range read of
	// [Key, End) that asks for Limit keys: End is always a bounded end
	// (see KeyNames.RangeEnd), never wire.NoEnd, because a range read
	// counts every key of its range, past its limit too.
	End   string
	Limit uint64
	// ReadModifyWrite makes the operation YCSB's read-modify-write: the
	// session reads Key and, once answered, writes it (Kind is then Get).
	ReadModifyWrite bool
}

// seedStream is mixed into the second PCG word so that a single seed
// still fills both halves of the generator's state differently.
const seedStream = 0x9e3779b97f4a7c15

// NewGenerator validates c and returns a generator seeded with seed. With a
// Zipfian skew below 1 the first generator for a given key space and skew
// pays for computing zeta (milliseconds for a million keys); later ones
// reuse it. Skews from 1 on need no set-up.
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
	if m, ok := levelMixes[c.Mix]; ok {
		g.mix = &m
	}
	if c.ZipfSkew > 0 {
		g.zipf = newRanker(c.KeySpace, c.ZipfSkew)
	}
	return g, nil
}

// Next draws the next operation: its kind, its level and its key, named
// by KeyNames; a scan's range holds the names of as many keys as its
// length, from its first key on.
func (g *Generator) Next() Op {
	d := g.next()
	op := Op{Kind: d.kind, Level: d.level, Key: g.names.Name(d.key), ReadModifyWrite: d.rmw}
	if d.kind == wire.Scan {
		op.End, op.Limit = g.names.RangeEnd(d.key, d.scan), d.scan
	}
	return op
}

// drawn is an operation with its key's number.
type drawn struct {
	kind  wire.OpKind
	level wire.Level
	key   uint64
	rmw   bool
	// scan is a scan's length in keys, key its first; 0 for every other
	// kind.
	scan uint64
}

// next draws the next operation with its key's number.
func (g *Generator) next() drawn {
	if g.mix != nil {
		return g.nextMix()
	}
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
	case u < m.insert+m.update+m.readModifyWrite+m.scan:
		return drawn{kind: wire.Scan, key: g.key(), scan: g.scanLength(m.maxScan)}, YCSBScan
	case m.latest:
		return drawn{kind: wire.Get, key: g.latestKey()}, YCSBRead
	}
	return drawn{kind: wire.Get, key: g.key()}, YCSBRead
}

// nextMix draws an operation of a mix that fixes its level with its kind.
func (g *Generator) nextMix() drawn {
	m := g.mix
	u := g.rng.Float64()
	switch {
	case u < m.strongWrite:
		return drawn{kind: wire.Put, level: wire.Strong, key: g.key()}
	case u < m.strongWrite+m.strongRead:
		return drawn{kind: wire.Get, level: wire.Strong, key: g.key()}
	case u < m.strongWrite+m.strongRead+m.weakScan:
		return drawn{kind: wire.Scan, level: wire.Weak, key: g.key(), scan: g.scanLength(m.maxScan)}
	}
	return drawn{kind: wire.Get, level: wire.Weak, key: g.key()}
}

// scanLength draws a scan's length, uniform in 1 .. longest.
func (g *Generator) scanLength(longest uint64) uint64 { return 1 + g.rng.Uint64N(longest) }

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
		r = g.zipf.draw(g.rng)
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
	r := g.zipf.draw(g.rng)
	if g.scrambled {
		return scramble(r, g.keySpace)
	}
	return r
}
