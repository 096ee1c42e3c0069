package checker

import (
	"container/heap"
	"encoding/binary"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// genConfig shapes a simulated run of a correct store.
type genConfig struct {
	ops, sessions, pipeline int
	writeShare, weakShare   float64
	hotKeys, keys           int
	hotShare                float64
	// deleteShare is the share of writes that are deletes.
	deleteShare float64
	// txnShare is the share of operations that are transactions (see
	// genTxn).
	txnShare float64
	seed     uint64
}

// generate simulates a correct store: one log, every op taking effect at
// a point inside its interval, strong reads returning the latest value,
// weak reads returning the value as of some log index no older than the
// newest write their session already knows of (a lagging replica). Every
// put reports its slot; a weak read reports the index it read at. A
// delete is logged like a put, and a read of the state it left finds
// nothing. A transaction is logged too, and runs on the latest state.
func generate(c genConfig) []history.Event {
	rng := rand.New(rand.NewPCG(c.seed, 1))
	type version struct {
		slot  uint64
		value []byte
		gone  bool // written by a delete
	}
	var (
		q        actions
		events   = make([]history.Event, 0, c.ops)
		logLen   uint64
		versions = map[string][]version{}
		known    = make([]uint64, c.sessions) // newest slot each session knows of
		inFlight = make([]int, c.sessions)
		issued   int
		seq      = make([]uint64, c.sessions)
	)
	type opState struct {
		knownAtInvoke, knows uint64
	}
	state := make([]opState, 0, c.ops)
	progs := map[int]*wire.Transaction{}
	us := func(lo, hi int) int64 { return int64(lo+rng.IntN(hi-lo+1)) * 1000 }
	for s := range c.sessions {
		heap.Push(&q, action{t: us(0, 20), kind: issue, who: s})
	}
	for q.Len() > 0 {
		a := heap.Pop(&q).(action)
		switch a.kind {
		case issue:
			s := a.who
			if issued >= c.ops {
				continue
			}
			if inFlight[s] >= c.pipeline {
				continue // the next return issues again
			}
			issued++
			inFlight[s]++
			seq[s]++
			e := history.Event{Session: uint64(s + 1), Seq: seq[s], Invoke: a.t, Outcome: history.OK, Level: wire.Strong}
			if rng.Float64() < c.weakShare {
				e.Level = wire.Weak
			}
			if c.txnShare > 0 && rng.Float64() < c.txnShare {
				e.Kind = wire.Txn
				progs[len(events)] = genTxn(rng, c, e.Session, e.Seq)
				e.Value = wire.AppendTxn(nil, progs[len(events)])
			} else if rng.Float64() < c.writeShare {
				e.Kind = wire.Put
				e.Value = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, e.Session), e.Seq)
				if c.deleteShare > 0 && rng.Float64() < c.deleteShare {
					e.Kind, e.Value = wire.Delete, nil
				}
			}
			if rng.Float64() < c.hotShare {
				e.Key = strconv.Itoa(rng.IntN(c.hotKeys))
			} else {
				e.Key = strconv.Itoa(c.hotKeys + rng.IntN(c.keys))
			}
			i := len(events)
			events = append(events, e)
			state = append(state, opState{knownAtInvoke: known[s]})
			heap.Push(&q, action{t: a.t + us(1, 40), kind: effect, who: i})
			heap.Push(&q, action{t: a.t + us(0, 15), kind: issue, who: s})
		case effect:
			e := &events[a.who]
			vs := versions[e.Key]
			switch {
			case e.Kind == wire.Txn:
				logLen++
				e.Slot = logLen
				e.Result = wire.AppendTxnResult(nil, runTxn(progs[a.who], func(k string) ([]byte, bool) {
					if n := len(versions[k]); n > 0 && !versions[k][n-1].gone {
						return versions[k][n-1].value, true
					}
					return nil, false
				}, func(k string, v []byte) {
					versions[k] = append(versions[k], version{logLen, v, v == nil})
				}, c))
				state[a.who].knows = logLen
			case e.IsWrite():
				logLen++
				e.Slot = logLen
				versions[e.Key] = append(vs, version{logLen, e.Value, e.Kind == wire.Delete})
				state[a.who].knows = logLen
			case e.Level == wire.Strong:
				if n := len(vs); n > 0 && !vs[n-1].gone {
					e.Value, e.Found = vs[n-1].value, true
				}
				state[a.who].knows = logLen
			default:
				lo := state[a.who].knownAtInvoke
				at := lo + uint64(rng.IntN(int(logLen-lo)+1))
				if n := sort.Search(len(vs), func(i int) bool { return vs[i].slot > at }); n > 0 && !vs[n-1].gone {
					e.Value, e.Found = vs[n-1].value, true
				}
				e.Slot = at
				state[a.who].knows = at
			}
			heap.Push(&q, action{t: a.t + us(1, 40), kind: ret, who: a.who})
		case ret:
			e := &events[a.who]
			e.Return = a.t
			s := int(e.Session - 1)
			known[s] = max(known[s], state[a.who].knows)
			inFlight[s]--
			heap.Push(&q, action{t: a.t + us(0, 5), kind: issue, who: s})
		}
	}
	return events
}

const (
	issue = iota
	effect
	ret
)

type action struct {
	t         int64
	kind, who int
}

type actions []action

func (q actions) Len() int { return len(q) }
func (q actions) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].kind > q[j].kind // returns before effects before issues: no zero-length overlap
}
func (q actions) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *actions) Push(x any)   { *q = append(*q, x.(action)) }
func (q *actions) Pop() any {
	old := *q
	a := old[len(old)-1]
	*q = old[:len(old)-1]
	return a
}
