package workload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Value sizes. A value carries the 16-byte identity of the operation that
// wrote it, so it cannot be shorter; the upper bound keeps a single value far
// below what the wire accepts in one frame.
const (
	MinValueSize = 16
	MaxValueSize = 1 << 20
)

// Config describes an operation mix. Percentages are in [0, 100] and may be
// fractional.
type Config struct {
	// Writes is the percentage of strong operations that are writes.
	Writes float64
	// WeakRatio is the percentage of operations that are weak.
	WeakRatio float64
	// WeakWrites is the percentage of weak operations that are writes.
	WeakWrites float64
	// Conflicts is the percentage of operations, of either level, that go
	// to HotKey instead of a key drawn from the distribution.
	Conflicts float64
	// KeySpace is the number of keys; keys are numbered 0 .. KeySpace-1
	// and named by KeyNames.
	KeySpace uint64
	// ZipfSkew is the Zipfian's theta, in [0, MaxZipfSkew]: key rank r
	// (from 0) is drawn with probability proportional to 1/(r+1)^theta. 0
	// draws keys uniformly; 0.99 is YCSB's usual value. Below 1 the draws
	// are YCSB's, from 1 on exact (see newRanker).
	ZipfSkew float64
	// ValueSize is the size in bytes of a written value, in
	// [MinValueSize, MaxValueSize].
	ValueSize int
	// HotKey is the key conflicting operations share. It must lie in the
	// key space; the default, 0, does for every key space.
	HotKey uint64
	// Unscrambled draws Zipfian keys as plain ranks, so key 0 is the most
	// popular, key 1 the next and so on. By default ranks are hashed over
	// the key space like YCSB's ScrambledZipfianGenerator.
	Unscrambled bool
	// YCSB, when set, draws the kinds of operations from one of YCSB's
	// core workloads (see YCSBWorkloads) instead of Writes and
	// WeakWrites; WeakRatio still chooses each operation's level, and
	// Conflicts its key.
	YCSB string
	// YCSBWeak names the kinds of YCSB operations that may be weak
	// (YCSBKinds: read, update, insert, rmw, scan); an operation of another
	// kind drawn weak runs strong, so the weak share is WeakRatio of the
	// operations of these kinds. Empty allows every kind.
	YCSBWeak []string
	// Mix, when set, names a mix (see Mixes) that draws each operation's
	// kind and its level together: Writes, WeakRatio and WeakWrites do
	// not apply, and neither YCSB nor YCSBWeak may be set with it.
	// Conflicts still chooses keys.
	Mix string
	// KeyPrefix begins every key's name; empty is the package's
	// KeyPrefix. A run against a store that holds earlier runs' keys
	// takes a prefix of its own, so its history starts from nothing.
	KeyPrefix string
	// InsertStride and InsertOffset number the keys a session inserts
	// (YCSB D): its i-th insert is key KeySpace + i*InsertStride +
	// InsertOffset, so sessions that share a stride and differ in offset
	// never insert the same key. Give every session the number of
	// sessions as stride and its own index as offset.
	InsertStride, InsertOffset uint64
}

// DefaultConfig returns the seeds' usual mix: half the operations weak, 10%
// writes at each level, no conflicts, YCSB skew 0.99 over a million keys and
// 100-byte values.
func DefaultConfig() Config {
	return Config{
		Writes:     10,
		WeakRatio:  50,
		WeakWrites: 10,
		Conflicts:  0,
		KeySpace:   1_000_000,
		ZipfSkew:   0.99,
		ValueSize:  100,
		HotKey:     0,
	}
}

// Validate reports every field that is out of range, each error naming its
// field.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("workload: %s: "+format, append([]any{field}, args...)...))
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"Writes", c.Writes}, {"WeakRatio", c.WeakRatio}, {"WeakWrites", c.WeakWrites}, {"Conflicts", c.Conflicts}} {
		if !isPercentage(p.v) {
			bad(p.name, "%v is not a percentage in [0, 100]", p.v)
		}
	}
	if c.KeySpace == 0 {
		bad("KeySpace", "must be at least 1")
	} else if c.HotKey >= c.KeySpace {
		bad("HotKey", "%d is outside the key space [0, %d)", c.HotKey, c.KeySpace)
	}
	if !(c.ZipfSkew >= 0 && c.ZipfSkew <= MaxZipfSkew) {
		bad("ZipfSkew", "%v is not in [0, %v] (0 is uniform, 0.99 is the usual YCSB skew)", c.ZipfSkew, MaxZipfSkew)
	}
	if _, ok := ycsbMixes[c.YCSB]; c.YCSB != "" && !ok {
		bad("YCSB", "%q is not one of YCSB's core workloads this generator draws (%s)", c.YCSB, strings.Join(YCSBWorkloads(), ", "))
	}
	for _, k := range c.YCSBWeak {
		if !slices.Contains(YCSBKinds(), k) {
			bad("YCSBWeak", "%q is not a kind of YCSB operation (%s)", k, strings.Join(YCSBKinds(), ", "))
		}
	}
	c.validateMix(bad)
	if c.InsertOffset >= max(c.InsertStride, 1) {
		bad("InsertOffset", "%d is not below the stride %d", c.InsertOffset, max(c.InsertStride, 1))
	}
	if c.ValueSize < MinValueSize || c.ValueSize > MaxValueSize {
		bad("ValueSize", "%d is not in [%d, %d]: a value embeds the %d-byte identity of its write",
			c.ValueSize, MinValueSize, MaxValueSize, MinValueSize)
	}
	return errors.Join(errs...)
}

// validateMix checks Mix: a mix this generator draws, and alone in
// choosing the operations' kinds.
func (c Config) validateMix(bad func(field, format string, args ...any)) {
	switch _, ok := levelMixes[c.Mix]; {
	case c.Mix == "":
	case !ok:
		bad("Mix", "%q is not a mix this generator draws (%s)", c.Mix, strings.Join(Mixes(), ", "))
	case c.YCSB != "":
		bad("Mix", "%q and YCSB %q both choose the operations' kinds: give one", c.Mix, c.YCSB)
	case len(c.YCSBWeak) > 0:
		bad("Mix", "%q fixes every operation's level: YCSBWeak does not apply", c.Mix)
	}
}

// isPercentage also rejects NaN, which fails every comparison.
func isPercentage(v float64) bool { return v >= 0 && v <= 100 && !math.IsNaN(v) }
