package checker

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// genKey picks a key as generate does.
func genKey(rng *rand.Rand, c genConfig) string {
	if rng.Float64() < c.hotShare {
		return strconv.Itoa(rng.IntN(c.hotKeys))
	}
	return strconv.Itoa(c.hotKeys + rng.IntN(c.keys))
}

// genTxn makes a random program for transaction e: a compare on whether
// a key exists, and branches of up to four puts, range reads (a key, a
// span or every key from one on; a limit, KeysOnly, CountOnly) and range
// deletes, with PrevKV at random. Every put writes a value of its own.
func genTxn(rng *rand.Rand, c genConfig, session, seq uint64) *wire.Transaction {
	t := &wire.Transaction{Compares: []wire.Compare{{Key: genKey(rng, c), Target: wire.CompareVersion, Result: wire.Greater}}}
	branch := func(tag byte) []wire.TxnOp {
		ops := make([]wire.TxnOp, 1+rng.IntN(4))
		for j := range ops {
			o := &ops[j]
			o.Key = genKey(rng, c)
			switch r := rng.Float64(); {
			case r < 0.45:
				o.Kind = wire.Put
				v := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, session), seq)
				o.Value = append(v, tag, byte(j))
			case r < 0.9:
				o.Kind = wire.Get
				switch rng.IntN(4) {
				case 0:
					o.Limit = uint64(1 + rng.IntN(3))
				case 1:
					o.KeysOnly = true
				case 2:
					o.CountOnly = rng.IntN(2) == 0
				}
			default:
				o.Kind = wire.Delete
			}
			if o.Kind != wire.Put {
				switch rng.IntN(3) {
				case 0:
					o.End = "\x00"
				case 1:
					o.End = genKey(rng, c)
				}
			}
			o.PrevKV = o.Kind != wire.Get && rng.IntN(2) == 0
			if o.Kind != wire.Get && writesAgain(ops[:j], o) {
				// A branch writes a key once (wire.Transaction.Validate).
				o.Kind, o.Value, o.PrevKV = wire.Get, nil, false
			}
		}
		return ops
	}
	t.Then = branch(0)
	if rng.IntN(3) > 0 {
		t.Else = branch(1)
	}
	return t
}

// writesAgain reports whether write o touches a key an earlier write of
// its branch wrote: a put of a key put before or inside a deleted span, a
// delete of a span holding a key put before.
func writesAgain(earlier []wire.TxnOp, o *wire.TxnOp) bool {
	for i := range earlier {
		e := &earlier[i]
		switch {
		case e.Kind == wire.Put && o.Kind == wire.Put && e.Key == o.Key,
			e.Kind == wire.Put && o.Kind == wire.Delete && o.Covers(e.Key),
			e.Kind == wire.Delete && o.Kind == wire.Put && e.Covers(o.Key):
			return true
		}
	}
	return false
}

// runTxn runs program t on the state read gives, writing with write (a
// nil value: a delete), and returns its answer. Each operation sees what
// the ones before it wrote, as in etcd.
func runTxn(t *wire.Transaction, read func(string) ([]byte, bool), write func(string, []byte), c genConfig) *wire.TxnResult {
	own := map[string][]byte{} // nil: deleted; puts write non-empty values
	get := func(k string) ([]byte, bool) {
		if v, ok := own[k]; ok {
			return v, v != nil
		}
		return read(k)
	}
	all := make([]string, c.hotKeys+c.keys)
	for i := range all {
		all[i] = strconv.Itoa(i)
	}
	slices.Sort(all)
	span := func(o *wire.TxnOp) []string {
		var ks []string
		for _, k := range all {
			switch {
			case k < o.Key:
			case o.End == "" && k != o.Key:
			case o.End != "" && o.End != "\x00" && k >= o.End:
			default:
				if _, ok := get(k); ok {
					ks = append(ks, k)
				}
			}
		}
		return ks
	}
	c0 := t.Compares[0]
	_, exists := get(c0.Key)
	res := &wire.TxnResult{Succeeded: exists}
	ops := t.Then
	if !exists {
		ops = t.Else
	}
	for j := range ops {
		o := &ops[j]
		var r wire.TxnOpResult
		switch o.Kind {
		case wire.Put:
			if v, ok := get(o.Key); ok && o.PrevKV {
				r.KVs = []wire.KeyValue{{Key: o.Key, Value: v}}
			}
			own[o.Key] = o.Value
		case wire.Delete:
			for _, k := range span(o) {
				if o.PrevKV {
					v, _ := get(k)
					r.KVs = append(r.KVs, wire.KeyValue{Key: k, Value: v})
				}
				r.Deleted++
				own[k] = nil
			}
		case wire.Get:
			ks := span(o)
			r.Count = uint64(len(ks))
			if o.CountOnly {
				break
			}
			if o.Limit > 0 && uint64(len(ks)) > o.Limit {
				ks, r.More = ks[:o.Limit], true
			}
			for _, k := range ks {
				kv := wire.KeyValue{Key: k}
				if !o.KeysOnly {
					kv.Value, _ = get(k)
				}
				r.KVs = append(r.KVs, kv)
			}
		}
		res.Results = append(res.Results, r)
	}
	keys := make([]string, 0, len(own))
	for k := range own {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		write(k, own[k])
	}
	return res
}

// txnConfig shapes a small random history with transactions.
func txnConfig(rng *rand.Rand, seed uint64) genConfig {
	return genConfig{ops: 10 + rng.IntN(40), sessions: 2 + rng.IntN(4), pipeline: 1 + rng.IntN(4),
		writeShare: 0.2 + 0.5*rng.Float64(), weakShare: rng.Float64(), hotKeys: 1 + rng.IntN(3), keys: 1 + rng.IntN(4),
		hotShare: 0.6, deleteShare: 0.3 * rng.Float64(), txnShare: 0.1 + 0.4*rng.Float64(), seed: seed}
}

// forget makes a write's outcome unknown: a transaction loses its answer.
func forget(e *history.Event) {
	e.Outcome, e.Return = history.Unknown, 0
	e.Result = nil
}

// TestGeneratedTxnHistoriesAreClean: a correct store's histories with
// transactions (puts, range reads with limits, KeysOnly and CountOnly,
// range deletes, PrevKV, both branches) check clean, also once some
// writes and transactions lose their outcome or their slot, and
// porcupine's search agrees with the cluster check on every key.
func TestGeneratedTxnHistoriesAreClean(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 19))
	txns := 0
	for seed := range uint64(1500) {
		c := txnConfig(rng, seed)
		events := generate(c)
		for i := range events {
			e := &events[i]
			if e.Kind == wire.Txn {
				txns++
			}
			switch rng.IntN(10) {
			case 0:
				if e.IsWrite() {
					forget(e)
				}
			case 1:
				e.Slot = 0
			}
		}
		r := Check(&history.File{Events: events}, Options{CrossCheck: true, MaxPerProperty: -1})
		require.NoError(t, r.Err, "seed %d", seed)
		require.True(t, r.Clean(), "seed %d: %v", seed, r.Violations)
	}
	t.Logf("%d transactions", txns)
	require.Greater(t, txns, 3000)
}

// TestCausalWithTxnsAgreesWithClosure: with transactions among the
// operations, some reads redirected (plain gets and values transactions
// returned), outcomes and slots dropped, the sweep flags exactly what the
// brute-force closure does, a read of one write of a transaction's branch
// bringing all of them into its past.
func TestCausalWithTxnsAgreesWithClosure(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 23))
	flagged, byGroup := 0, 0
	for seed := range uint64(1000) {
		c := txnConfig(rng, seed)
		events := generate(c)
		for range 1 + rng.IntN(3) {
			redirectPast(rng, events)
		}
		for range 1 + rng.IntN(3) {
			redirectTxnRead(rng, events)
		}
		for range 1 + rng.IntN(3) {
			redirectToTxn(rng, events)
		}
		halfApply(t, rng, events)
		for i := range events {
			e := &events[i]
			switch rng.IntN(12) {
			case 0:
				if e.IsWrite() {
					forget(e)
				}
			case 1:
				e.Slot = 0
			}
		}
		want := closureFindings(t, events)
		got := checkerFindings(t, events)
		require.Equal(t, want, got, "seed %d", seed)
		if len(want) > 0 {
			flagged++
		}
		if len(closureFindingsOf(t, events, false)) < len(want) {
			byGroup++
		}
	}
	t.Logf("%d of 1000 histories have causal violations, %d of them more for a transaction's atomicity", flagged, byGroup)
	require.Greater(t, flagged, 100)
	require.Greater(t, byGroup, 30)
}

// TestS1WithTxnsIsSound: on histories with transactions and reads
// redirected, S1 is reported only where porcupine's search over each key's
// ops (a transaction's sub-operations among them) finds the key not
// linearizable, and for most of those.
func TestS1WithTxnsIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 29))
	flagged, refBad, total := 0, 0, 0
	for seed := range uint64(1500) {
		c := txnConfig(rng, seed)
		c.ops, c.weakShare = 8+rng.IntN(17), 0.5*rng.Float64()
		events := generate(c)
		for range rng.IntN(3) {
			redirect(rng, events)
		}
		for range 1 + rng.IntN(3) {
			redirectTxnRead(rng, events)
		}
		r := Check(&history.File{Events: events}, Options{MaxPerProperty: -1})
		require.NoError(t, r.Err)
		// A transaction that contradicts itself, or updates a version
		// another already updated, is beyond what the reference sees.
		ours := slices.ContainsFunc(r.Violations, func(v Violation) bool {
			return v.Property == "S1" && !strings.HasPrefix(v.Detail, "TxnInternal") && !strings.HasPrefix(v.Detail, "LostUpdate")
		})
		ref, ok := referenceS1(t, events)
		if !ok {
			continue
		}
		total++
		if ref {
			refBad++
		}
		if ours {
			flagged++
			require.True(t, ref, "seed %d: S1 reported on a linearizable history: %v", seed, r.Violations)
		}
	}
	t.Logf("of %d histories, %d are not linearizable key by key, %d of them caught", total, refBad, flagged)
	require.Greater(t, refBad, total/20)
	require.Greater(t, flagged, refBad*3/4)
}

// redirectTxnRead makes a value a completed transaction's range read
// returned the value of a put on its key invoked before the transaction
// returned, if the branch did not write the key before.
func redirectTxnRead(rng *rand.Rand, events []history.Event) {
	e := &events[rng.IntN(len(events))]
	if e.Kind != wire.Txn || e.Outcome != history.OK {
		return
	}
	prog, res, err := e.Txn()
	if err != nil {
		panic(err)
	}
	ops := prog.Then
	if !res.Succeeded {
		ops = prog.Else
	}
	if len(ops) == 0 {
		return
	}
	j := rng.IntN(len(ops))
	o, r := &ops[j], &res.Results[j]
	if o.Kind != wire.Get || o.KeysOnly || len(r.KVs) == 0 {
		return
	}
	kv := &r.KVs[rng.IntN(len(r.KVs))]
	for _, before := range ops[:j] {
		if before.Kind == wire.Delete || before.Kind == wire.Put && before.Key == kv.Key {
			return
		}
	}
	var puts [][]byte
	for i := range events {
		if w := &events[i]; w.Kind == wire.Put && w.Key == kv.Key && w.Invoke <= e.Return {
			puts = append(puts, w.Value)
		}
	}
	if len(puts) == 0 {
		return
	}
	kv.Value = puts[rng.IntN(len(puts))]
	e.Result = wire.AppendTxnResult(nil, res)
}

// redirectToTxn makes a random get return a value a transaction invoked
// before the get returned puts on its key, so that the get's session has
// the transaction's other writes in its past.
func redirectToTxn(rng *rand.Rand, events []history.Event) {
	r := &events[rng.IntN(len(events))]
	if r.Kind != wire.Get {
		return
	}
	var puts [][]byte
	for i := range events {
		e := &events[i]
		if e.Kind != wire.Txn || e.Invoke > r.Return {
			continue
		}
		prog, _, err := e.Txn()
		if err != nil {
			panic(err)
		}
		for _, o := range append(slices.Clip(prog.Then), prog.Else...) {
			if o.Kind == wire.Put && o.Key == r.Key {
				puts = append(puts, o.Value)
			}
		}
	}
	if len(puts) > 0 {
		r.Value, r.Found = puts[rng.IntN(len(puts))], true
	}
}

// halfApply picks a transaction's branch that writes several keys, makes
// a get of one of them that returned after the transaction was invoked
// return its value, and a later get of another key in the same session
// return a put on that key invoked before it returned, at random: often
// one older than the transaction's. It reports whether it found such gets.
func halfApply(t *testing.T, rng *rand.Rand, events []history.Event) bool {
	h, err := index(&history.File{Events: events}, newReporter(-1, guarantees.All), false)
	require.NoError(t, err)
	type pair struct {
		r1, r2 *history.Event
		wy     *op
	}
	var pairs []pair
	for _, g := range h.groups {
		for _, y := range g.members {
			for _, x := range g.members {
				wy, wx := &h.ops[y], &h.ops[x]
				if x == y || wy.del {
					continue
				}
				for i := range events {
					r1 := &events[i]
					if r1.Kind != wire.Get || r1.Key != wy.key || r1.Return <= wy.inv || r1.Outcome != history.OK {
						continue
					}
					for j := range events {
						if r2 := &events[j]; r2.Kind == wire.Get && r2.Key == wx.key && r2.Session == r1.Session && r2.Invoke > r1.Return {
							pairs = append(pairs, pair{r1, r2, wy})
						}
					}
				}
			}
		}
	}
	if len(pairs) == 0 {
		return false
	}
	p := pairs[rng.IntN(len(pairs))]
	var puts [][]byte
	for i := range events {
		if w := &events[i]; w.Kind == wire.Put && w.Key == p.r2.Key && w.Invoke <= p.r2.Return {
			puts = append(puts, w.Value)
		}
	}
	p.r1.Value, p.r1.Found = p.wy.ev.Value, true
	if k := rng.IntN(len(puts) + 1); k < len(puts) {
		p.r2.Value, p.r2.Found = puts[k], true
	} else {
		p.r2.Value, p.r2.Found = nil, false
	}
	return true
}
