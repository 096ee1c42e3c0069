package workload

import (
	"strconv"
	"strings"
	"sync"
)

// KeyPrefix begins every key name unless told otherwise, as in YCSB's
// "user" keys.
const KeyPrefix = "user"

// KeyNames turns the key numbers the generator draws into the byte keys
// the store is asked for: a prefix and the number in decimal, zero-padded
// to the width of the key space's largest, so that the names sort as the
// numbers do and a range of names is a range of keys.
//
// For a key space of up to maxTabledBytes of names, all of them are made
// once, in one string, and a name is a slice of it: drawing a key then
// allocates nothing, and the names a history keeps share that string.
type KeyNames struct {
	prefix string
	n      uint64 // the keys in the space
	width  int
	size   int    // the bytes of one name
	table  string // every name, one after another; empty when too large
}

// maxTabledBytes bounds a key space's table of names: 16 MB, room for a
// few million names.
const maxTabledBytes = 16 << 20

// NewKeyNames returns the names of a key space of n keys, each beginning
// with prefix (KeyPrefix when empty). Tables are shared by every caller in
// the process that asks for the same space.
func NewKeyNames(prefix string, n uint64) *KeyNames {
	if prefix == "" {
		prefix = KeyPrefix
	}
	v, _ := keyNamesCache.LoadOrStore(keySpaceID{prefix, n}, new(keyNamesEntry))
	e := v.(*keyNamesEntry)
	e.once.Do(func() { e.names = newKeyNames(prefix, n) })
	return e.names
}

// keySpaceID names a key space in the cache.
type keySpaceID struct {
	prefix string
	n      uint64
}

func newKeyNames(prefix string, n uint64) *KeyNames {
	width := len(strconv.FormatUint(max(n, 1)-1, 10))
	k := &KeyNames{prefix: prefix, n: n, width: width, size: len(prefix) + width}
	if n > uint64(maxTabledBytes/k.size) {
		return k
	}
	var b strings.Builder
	b.Grow(int(n) * k.size)
	buf := make([]byte, 0, k.size)
	for i := range n {
		b.Write(k.append(buf[:0], i))
	}
	k.table = b.String()
	return k
}

// Name returns key i's name.
func (k *KeyNames) Name(i uint64) string {
	if i < uint64(len(k.table)/k.size) {
		off := int(i) * k.size
		return k.table[off : off+k.size]
	}
	return string(k.append(make([]byte, 0, k.size), i))
}

// RangeEnd returns the exclusive End of the range that starts at key
// first's name and holds the names of the next length keys of the space,
// first included: the name of key first+length. Names past the space (the
// keys inserts add) may be wider and then sort elsewhere: with a million
// keys "user1000000" lies between "user100000" and "user100001". So a
// range that would reach past the space's last key ends just after that
// key's name instead, holding the keys left; one that starts past the
// space holds its first key alone. The End is always bounded: a range read
// counts every key of its range, whatever its limit.
func (k *KeyNames) RangeEnd(first, length uint64) string {
	if first < k.n && length < k.n-first {
		return k.Name(first + length)
	}
	last := first
	if first < k.n {
		last = k.n - 1
	}
	// The smallest string above last's name.
	return k.Name(last) + "\x00"
}

// append appends key i's name to b.
func (k *KeyNames) append(b []byte, i uint64) []byte {
	b = append(b, k.prefix...)
	var buf [20]byte
	d := strconv.AppendUint(buf[:0], i, 10)
	for range k.width - len(d) {
		b = append(b, '0')
	}
	return append(b, d...)
}

type keyNamesEntry struct {
	once  sync.Once
	names *KeyNames
}

// keyNamesCache holds the names of every key space asked for; a run uses
// one.
var keyNamesCache sync.Map // keySpaceID -> *keyNamesEntry
