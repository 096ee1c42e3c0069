package checker

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// A transaction is checked as the single-key operations it is made of,
// its sub-operations (see the package comment for what that checks and
// what it does not). The splitter makes them: for a transaction that
// completed it replays the branch that ran, in order, against what the
// branch wrote so far (replayer), which turns what the compares and the
// operations observed of the state before the transaction into reads, and
// checks those of the keys the branch wrote itself on the spot
// (TxnInternal); then each key the branch wrote gets its last write. For
// one without a result, both branches' last writes.
//
// The writes of one branch form a group (hist.groups): a read of one
// brings all into the reader's causal past (see vclock), and the span S1
// gives each ends where any one's must (latestPoints). The reads of one
// transaction read one state (hist.snaps): each has in its past what any
// of them read (sweep.returned).

// part places a sub-operation in its transaction.
type part struct {
	txn *history.Event // the transaction; nil for an op of its own
	at  pos
	grp int32 // a write's group (see group), or -1
	// snap is, for a read, the index in hist.snaps of its transaction's
	// reads, or -1.
	snap int32
}

// pos is the place in its transaction's program of the compare or the
// operation a sub-operation comes from.
type pos struct {
	in    place
	index int32
}

type place uint8

const (
	inThen place = iota
	inElse
	inCompares
)

func (p pos) String() string {
	return fmt.Sprintf("%s[%d]", [...]string{"then", "else", "compare"}[p.in], p.index)
}

// group is a set of writes that take effect together: the last writes on
// each key of one branch of one transaction. Its members share session,
// interval, level and outcome.
type group struct {
	members []int32 // by key
}

// grp returns the group of write i, or -1.
func (h *hist) grp(i int32) int32 {
	if h.parts == nil {
		return -1
	}
	return h.parts[i].grp
}

// snap returns the index in h.snaps of read i's transaction's reads, or
// -1.
func (h *hist) snap(i int32) int32 {
	if h.parts == nil {
		return -1
	}
	return h.parts[i].snap
}

// member returns group g's write on key, or -1.
func (h *hist) member(g int32, key string) int32 {
	ms := h.groups[g].members
	p, found := slices.BinarySearchFunc(ms, key, func(m int32, k string) int { return cmp.Compare(h.ops[m].key, k) })
	if !found {
		return -1
	}
	return ms[p]
}

// splitter turns transactions into sub-operations.
type splitter struct {
	h   *hist
	rep *reporter
	// putKeys holds, sorted, every key that some put of the history
	// writes, in transactions or not, whatever its outcome: what a range
	// may have found, or emptied.
	putKeys []string
	decoded map[*history.Event]decodedTxn
	// updated maps a version of a key (its value) to the first completed
	// transaction that read it and wrote the key.
	updated map[keyValue]updater
}

type keyValue struct{ key, value string }

type updater struct {
	txn      *history.Event
	read, by pos
}

type decodedTxn struct {
	prog *wire.Transaction
	res  *wire.TxnResult
}

func newSplitter(h *hist, events []*history.Event, rep *reporter) *splitter {
	sp := &splitter{h: h, rep: rep, decoded: map[*history.Event]decodedTxn{}, updated: map[keyValue]updater{}}
	// subs estimates how many ops the history splits into, so that the
	// ops are allocated once: a history of long scans splits into
	// millions, and growing to them copied the ops over and over.
	subs := len(events)
	for _, e := range events {
		switch e.Kind {
		case wire.Put:
			sp.putKeys = append(sp.putKeys, e.Key)
		case wire.Txn, wire.Scan:
			prog, res, _ := e.Txn() // index validated every event
			sp.decoded[e] = decodedTxn{prog, res}
			subs += len(prog.Compares) + len(prog.Then) + len(prog.Else)
			if res != nil {
				for _, r := range res.Results {
					subs += len(r.KVs)
				}
			}
			for _, ops := range [][]wire.TxnOp{prog.Then, prog.Else} {
				for _, o := range ops {
					if o.Kind == wire.Put {
						sp.putKeys = append(sp.putKeys, o.Key)
					}
				}
			}
		}
	}
	h.ops = slices.Grow(h.ops, subs)
	h.parts = make([]part, len(h.ops), cap(h.ops))
	for i := range h.parts {
		h.parts[i].grp, h.parts[i].snap = -1, -1
	}
	slices.Sort(sp.putKeys)
	sp.putKeys = slices.Compact(sp.putKeys)
	return sp
}

// spanKeys returns the keys of putKeys in the range of key and end, with
// etcd's conventions: end empty names key alone, "\x00" every key from key
// on, anything else the keys in [key, end).
func (sp *splitter) spanKeys(key, end string) []string {
	ks := sp.putKeys
	lo, found := slices.BinarySearch(ks, key)
	switch end {
	case "":
		if found {
			return ks[lo : lo+1]
		}
		return nil
	case wire.NoEnd:
		return ks[lo:]
	}
	hi, _ := slices.BinarySearch(ks, end)
	if hi <= lo {
		return nil
	}
	return ks[lo:hi]
}

// txn adds the sub-operations of transaction e, of dense session s.
func (sp *splitter) txn(e *history.Event, s int32) {
	h := sp.h
	d := sp.decoded[e]
	if d.res != nil {
		branch, in := d.prog.Then, inThen
		if !d.res.Succeeded {
			branch, in = d.prog.Else, inElse
		}
		r := sp.replay(e, in, d.prog.Compares, d.res.Succeeded, branch, d.res.Results)
		snap := int32(-1)
		if len(r.reads) > 1 {
			snap = int32(len(h.snaps))
			h.snaps = append(h.snaps, make([]int32, 0, len(r.reads)))
		}
		for _, sub := range r.reads {
			if snap >= 0 {
				h.snaps[snap] = append(h.snaps[snap], int32(len(h.ops)))
			}
			sp.add(e, s, sub, -1, snap)
		}
		writes := r.lastWrites()
		sp.lostUpdates(e, r, writes)
		sp.addGroup(e, s, writes)
		return
	}
	then := sp.replay(e, inThen, nil, false, d.prog.Then, nil).lastWrites()
	other := sp.replay(e, inElse, nil, false, d.prog.Else, nil).lastWrites()
	// A write both branches make alike is one sub-operation, in neither
	// group: reading it does not tell which branch ran.
	var onlyThen, onlyElse []subOp
	j := 0
	for _, w := range then {
		for j < len(other) && other[j].key < w.key {
			onlyElse = append(onlyElse, other[j])
			j++
		}
		if j < len(other) && other[j].key == w.key && other[j].del == w.del && bytes.Equal(other[j].value, w.value) {
			sp.add(e, s, w, -1, -1)
			j++
			continue
		}
		onlyThen = append(onlyThen, w)
	}
	onlyElse = append(onlyElse, other[j:]...)
	sp.addGroup(e, s, onlyThen)
	sp.addGroup(e, s, onlyElse)
}

// lostUpdates reports two completed transactions that read one version of
// a key and both wrote the key (LostUpdate). Each runs at one point, so
// its write follows the version it read with no write in between; values
// being unique, two cannot both do so. The checks per key cannot see
// that, since they take the read and the write apart.
func (sp *splitter) lostUpdates(e *history.Event, r *replayer, writes []subOp) {
	for _, w := range writes {
		b, ok := r.before[w.key]
		if !ok || !b.sub.found || b.noValue {
			continue
		}
		v := keyValue{w.key, string(b.sub.value)}
		first, seen := sp.updated[v]
		if !seen {
			sp.updated[v] = updater{txn: e, read: b.sub.at, by: w.at}
			continue
		}
		sp.rep.add(Violation{Property: "S1", Ops: plain(first.txn, e), Detail: fmt.Sprintf(
			"LostUpdate: txn %v (%v, then %v) and txn %v (%v, then %v) both read %s on key %q and wrote the key: "+
				"each must take effect right after the write of that value",
			first.txn.ID(), first.read, first.by, e.ID(), b.sub.at, w.at, shortValue(b.sub.value), w.key)})
	}
}

// addGroup adds the writes of one branch, sorted by key, as a group when
// there are several.
func (sp *splitter) addGroup(e *history.Event, s int32, writes []subOp) {
	h := sp.h
	g := int32(-1)
	if len(writes) > 1 {
		g = int32(len(h.groups))
		h.groups = append(h.groups, group{members: make([]int32, 0, len(writes))})
	}
	for _, w := range writes {
		if g >= 0 {
			h.groups[g].members = append(h.groups[g].members, int32(len(h.ops)))
		}
		sp.add(e, s, w, g, -1)
	}
}

// add appends sub-operation sub of transaction e.
func (sp *splitter) add(e *history.Event, s int32, sub subOp, g, snap int32) {
	ev := &history.Event{Session: e.Session, Seq: e.Seq, Level: e.Level, Kind: sub.kind, Key: sub.key,
		Value: sub.value, Found: sub.found, Invoke: e.Invoke, Return: e.Return, Outcome: e.Outcome, Slot: e.Slot}
	sp.h.add(op{ev: ev, key: sub.key, write: sub.kind != wire.Get, del: sub.del}, ev, s)
	sp.h.parts[len(sp.h.ops)-1] = part{txn: e, at: sub.at, grp: g, snap: snap}
}

// subOp is a sub-operation before it becomes an op.
type subOp struct {
	kind  wire.OpKind
	key   string
	value []byte
	found bool // a read found a value
	del   bool // a write is a delete
	at    pos  // where in the program it comes from
}

// replayer runs one branch of a transaction against what the branch wrote
// so far.
type replayer struct {
	sp *splitter
	e  *history.Event
	// own holds the branch's writes so far, the last per key.
	own map[string]subOp
	// before holds what the branch read of the state before it, per key,
	// to check that its reads agree (a KeysOnly read tells that a key held
	// some value, not which: noValue).
	before map[string]seenBefore
	reads  []subOp
}

type seenBefore struct {
	sub     subOp
	noValue bool
}

// replay runs a branch; results is nil for a transaction without a
// result, whose reads are not known. The compares, when they are known to
// have held (succeeded) or, alone, to have failed, tell something of the
// state the branch ran on (see compareFact).
func (sp *splitter) replay(e *history.Event, in place, compares []wire.Compare, succeeded bool,
	ops []wire.TxnOp, results []wire.TxnOpResult) *replayer {
	reads := len(compares)
	for i := range results {
		reads += len(results[i].KVs)
	}
	r := &replayer{sp: sp, e: e, own: map[string]subOp{}, before: make(map[string]seenBefore, reads),
		reads: make([]subOp, 0, reads)}
	if results != nil && (succeeded || len(compares) == 1) {
		for i, c := range compares {
			at := pos{inCompares, int32(i)}
			switch compareFact(&c, succeeded) {
			case factValue:
				r.read(at, c.Key, &wire.KeyValue{Key: c.Key, Value: c.Value}, false)
			case factPresent:
				r.read(at, c.Key, &wire.KeyValue{Key: c.Key}, true)
			case factAbsent:
				r.read(at, c.Key, nil, false)
			}
		}
	}
	for j := range ops {
		o, at := &ops[j], pos{in, int32(j)}
		var res *wire.TxnOpResult
		if results != nil {
			res = &results[j]
		}
		switch o.Kind {
		case wire.Put:
			if res != nil && o.PrevKV {
				switch {
				case len(res.KVs) == 0:
					r.read(at, o.Key, nil, false)
				case len(res.KVs) == 1 && res.KVs[0].Key == o.Key:
					r.read(at, o.Key, &res.KVs[0], false)
				}
			}
			r.own[o.Key] = subOp{kind: wire.Put, key: o.Key, value: o.Value, at: at}
		case wire.Delete:
			keys := sp.spanKeys(o.Key, o.End)
			if res != nil && o.PrevKV {
				r.readSpan(at, keys, res.KVs, false, res.Deleted == uint64(len(res.KVs)) && inOrder(o, res.KVs))
			}
			for _, k := range keys {
				r.own[k] = subOp{kind: wire.Delete, key: k, del: true, at: at}
			}
		case wire.Get:
			if res == nil {
				continue
			}
			keys := sp.spanKeys(o.Key, o.End)
			if o.CountOnly {
				if res.Count == 0 {
					r.readSpan(at, keys, nil, false, true)
				}
				continue
			}
			if !inOrder(o, res.KVs) {
				// Not an answer of this range in key order: what it
				// skipped is not known.
				r.readSpan(at, nil, res.KVs, o.KeysOnly, false)
				continue
			}
			n := uint64(len(res.KVs))
			if res.More || res.Count > n || (o.Limit > 0 && n >= o.Limit) {
				// Cut by its limit: keys past the last one returned are
				// not known absent.
				cut := 0
				if n > 0 {
					var found bool
					cut, found = slices.BinarySearch(keys, res.KVs[n-1].Key)
					if found {
						cut++
					}
				}
				keys = keys[:cut]
			}
			r.readSpan(at, keys, res.KVs, o.KeysOnly, true)
		}
	}
	return r
}

// inOrder reports whether kvs are keys of o's range, in ascending order.
func inOrder(o *wire.TxnOp, kvs []wire.KeyValue) bool {
	for i := range kvs {
		k := kvs[i].Key
		if i > 0 && k <= kvs[i-1].Key || !o.Covers(k) {
			return false
		}
	}
	return true
}

// readSpan reads the keys an operation returned, and, when complete is
// set, the keys of its span it did not return as absent; kvs are then in
// key order, as span is.
func (r *replayer) readSpan(at pos, span []string, kvs []wire.KeyValue, keysOnly, complete bool) {
	for i := range kvs {
		r.read(at, kvs[i].Key, &kvs[i], keysOnly)
	}
	if !complete {
		return
	}
	for _, k := range span {
		for len(kvs) > 0 && kvs[0].Key < k {
			kvs = kvs[1:]
		}
		if len(kvs) == 0 || kvs[0].Key != k {
			r.read(at, k, nil, false)
		}
	}
}

// read records that the compare or operation at found kv on key (nil: the
// key was absent; keysOnly: it held a value, not told which).
func (r *replayer) read(at pos, key string, kv *wire.KeyValue, keysOnly bool) {
	sub := subOp{kind: wire.Get, key: key, found: kv != nil, at: at}
	if kv != nil && !keysOnly {
		sub.value = kv.Value
	}
	if w, ok := r.own[key]; ok {
		if w.del == sub.found || (sub.found && !keysOnly && !bytes.Equal(w.value, sub.value)) {
			did := "wrote a value to"
			if w.del {
				did = "deleted"
			}
			r.internal(sub, fmt.Sprintf("%s, though %v %s it before", describeRead(sub, keysOnly), w.at, did))
		}
		return
	}
	b, seen := r.before[key]
	switch {
	case !seen:
		r.before[key] = seenBefore{sub: sub, noValue: keysOnly}
		if !keysOnly {
			r.reads = append(r.reads, sub)
		}
	case b.sub.found != sub.found || (sub.found && !keysOnly && !b.noValue && !bytes.Equal(b.sub.value, sub.value)):
		r.internal(sub, fmt.Sprintf("%s, though %v %s and the transaction had not written it since",
			describeRead(sub, keysOnly), b.sub.at, describeRead(b.sub, b.noValue)))
	case b.noValue && !keysOnly:
		r.before[key] = seenBefore{sub: sub}
		r.reads = append(r.reads, sub)
	}
}

// describeRead says what a read found on its key.
func describeRead(sub subOp, noValue bool) string {
	switch {
	case !sub.found:
		return fmt.Sprintf("found nothing on key %q", sub.key)
	case noValue:
		return fmt.Sprintf("found a value on key %q", sub.key)
	}
	return fmt.Sprintf("found %s on key %q", shortValue(sub.value), sub.key)
}

// internal reports a transaction whose read disagrees with what it wrote
// or read before in the same branch: one atomic step cannot do both.
func (r *replayer) internal(sub subOp, what string) {
	r.sp.rep.add(Violation{Property: "S1", Ops: plain(r.e), Detail: fmt.Sprintf(
		"TxnInternal: %s %s: a transaction takes effect at one point", subName(r.e, sub.at), what)})
}

// lastWrites returns the branch's last write on each key, by key.
func (r *replayer) lastWrites() []subOp {
	out := make([]subOp, 0, len(r.own))
	for _, w := range r.own {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b subOp) int { return cmp.Compare(a.key, b.key) })
	return out
}

func shortValue(v []byte) string {
	const show = 16
	if len(v) > show {
		return fmt.Sprintf("value %x… (%d bytes)", v[:show], len(v))
	}
	return fmt.Sprintf("value %x", v)
}

// fact is what a compare's outcome tells of its key.
type fact uint8

const (
	factNone    fact = iota
	factValue        // the key held the compare's value
	factPresent      // the key held some value
	factAbsent       // the key was absent
)

// compareFact returns what compare c, known to have held or failed (holds),
// tells of its key. As in etcd, an absent key's version, create and mod
// slots are 0 and a present key's 1 or more; a value compare on an absent
// key fails whatever it asks, so one that held found the key present (with
// the compare's value, if it asked for equality) and one that failed tells
// nothing.
func compareFact(c *wire.Compare, holds bool) fact {
	if c.Target == wire.CompareValue {
		switch {
		case !holds:
			return factNone
		case c.Result == wire.Equal:
			return factValue
		}
		return factPresent
	}
	n := c.Number
	var at0 bool
	switch c.Result {
	case wire.Equal:
		at0 = n == 0
	case wire.NotEqual:
		at0 = n != 0
	case wire.Less:
		at0 = n > 0
	case wire.Greater:
		at0 = false
	}
	at0 = at0 == holds // whether an absent key fits what was observed
	var positive bool  // whether a present key can
	switch c.Result {
	case wire.Equal:
		positive = !holds || n > 0
	case wire.NotEqual:
		positive = holds || n > 0
	case wire.Less:
		positive = !holds || n > 1
	case wire.Greater:
		positive = holds || n > 0
	}
	switch {
	case !at0:
		return factPresent
	case !positive:
		return factAbsent
	}
	return factNone
}
