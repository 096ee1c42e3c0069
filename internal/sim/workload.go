package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/protocol"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// Workload is a closed-loop load: every session keeps Pipeline operations in
// flight until it has submitted Ops operations.
type Workload struct {
	ClientSites []uint32 // one client process per entry
	Sessions    int      // sessions per client
	Ops         int      // operations per session
	Pipeline    int
	Keys        uint64  // keys are drawn uniformly from [0, Keys) and named by Key
	WriteRatio  float64 // fraction of writes
	WeakRatio   float64 // fraction of weak operations
	// DeleteRatio is the fraction of writes that are deletes. Zero draws
	// nothing for it, so a workload without deletes runs as it did before
	// there were any.
	DeleteRatio float64
	// TxnRatio is the fraction of operations that are transactions, each
	// a small random program over the workload's keys (see txnGen), always
	// strong. Zero draws nothing for it, so a workload without
	// transactions runs as it did before there were any.
	TxnRatio float64
	// ScanRatio is the fraction of operations that are scans, each a
	// range read over a run of the workload's keys (see txnGen.scan),
	// weak or strong as WeakRatio draws. Zero draws nothing for it.
	ScanRatio float64
	// ReadBack ends the run with a strong read of every key written
	// (transactions' writes included; see writtenKeys), from the first
	// client, recorded in the history: a write acknowledged and then lost
	// shows even when nothing else read its key afterwards.
	ReadBack bool
	// Idle, when set, pauses every session for that long once its first
	// IdleAfter operations have completed, as a client that goes quiet and
	// comes back does.
	Idle      time.Duration
	IdleAfter int
}

// Result is what a workload run observed.
type Result struct {
	Submitted, Completed int
	Paths                map[clientcore.Path]int
	// Latency per completed operation, in virtual time.
	Latencies []time.Duration
	// Events is the run's history, on the virtual clock, for the checker.
	// Operations still open at the end are recorded with unknown outcome.
	Events []history.Event
}

type inflight struct {
	start time.Duration
	op    wire.Op
}

// RunWorkload drives w until every operation completed or limit virtual time
// passed. It fails (returns an error) when an operation completes twice or
// never.
func (s *Sim) RunWorkload(w Workload, limit time.Duration) (Result, error) {
	res := Result{Paths: make(map[clientcore.Path]int)}
	type sess struct {
		client    wire.NodeID
		id        uint64
		submitted int
		open      int
	}
	open := make(map[wire.OpID]inflight)
	sessions := make(map[uint64]*sess)
	var dupErr error
	txns := newTxnGen(s.rand, w.Keys)
	draw := func(ss *sess) wire.Op {
		if w.TxnRatio > 0 && s.rand.Float64() < w.TxnRatio {
			// The key is whatever the client puts there: the client
			// library leaves it empty.
			return wire.Op{Kind: wire.Txn, Value: wire.AppendTxn(nil, txns.draw(ss.id, ss.submitted))}
		}
		if w.ScanRatio > 0 && s.rand.Float64() < w.ScanRatio {
			level := wire.Strong
			if s.rand.Float64() < w.WeakRatio {
				level = wire.Weak
			}
			return wire.NewScan(level, txns.scan())
		}
		i := s.rand.Uint64N(w.Keys)
		op := wire.Op{Key: Key(i, w.Keys)}
		if s.rand.Float64() < w.WriteRatio {
			op.Kind = wire.Put
			op.Value = fmt.Appendf(nil, "%x/%d", ss.id, ss.submitted)
			if w.DeleteRatio > 0 && s.rand.Float64() < w.DeleteRatio {
				op.Kind, op.Value = wire.Delete, nil
			} else if w.TxnRatio > 0 {
				txns.wrote(i, op.Value) // for the transactions' value compares
			}
		}
		if s.rand.Float64() < w.WeakRatio {
			op.Level = wire.Weak
		}
		return op
	}
	submit := func(ss *sess) {
		op := draw(ss)
		ss.submitted++
		ss.open++
		res.Submitted++
		id := s.Submit(ss.client, ss.id, op)
		op.ID = id
		open[id] = inflight{start: s.now, op: op}
	}
	fill := func(ss *sess) {
		for ss.open < w.Pipeline && ss.submitted < w.Ops {
			submit(ss)
		}
	}
	prev := s.OnComplete
	defer func() { s.OnComplete = prev }()
	s.OnComplete = func(client wire.NodeID, c clientcore.Completion) {
		f, ok := open[c.ID]
		if !ok {
			dupErr = fmt.Errorf("operation %v completed twice or was never submitted", c.ID)
			return
		}
		delete(open, c.ID)
		res.Events = append(res.Events, historyEvent(f, c, s.now))
		res.Completed++
		res.Paths[c.Path]++
		res.Latencies = append(res.Latencies, s.now-f.start)
		ss := sessions[c.ID.Session]
		ss.open--
		switch {
		case w.Idle > 0 && ss.submitted == w.IdleAfter:
			if ss.open == 0 {
				s.At(s.now+w.Idle, func() { fill(ss) })
			}
		case ss.submitted < w.Ops:
			submit(ss)
		}
	}
	for ci, site := range w.ClientSites {
		client := s.AddClient(site)
		for k := 0; k < w.Sessions; k++ {
			ss := &sess{client: client, id: uint64(ci+1)<<16 | uint64(k+1)}
			sessions[ss.id] = ss
			fill(ss)
		}
	}
	total := len(w.ClientSites) * w.Sessions * w.Ops
	start := s.now
	s.RunUntil(func() bool { return dupErr != nil || res.Completed == total }, limit)
	if w.ReadBack && dupErr == nil && res.Completed == total && len(w.ClientSites) > 0 {
		keys := writtenKeys(res.Events)
		client := sessions[1<<16|1].client
		for i, key := range keys {
			ss := &sess{client: client, id: 1<<40 | uint64(i), open: 1}
			sessions[ss.id] = ss
			ss.submitted = w.Ops // one read, no follow-up
			id := s.Submit(client, ss.id, wire.Op{Kind: wire.Get, Key: key})
			open[id] = inflight{start: s.now, op: wire.Op{ID: id, Kind: wire.Get, Key: key}}
			res.Submitted++
		}
		total += len(keys)
		s.RunUntil(func() bool { return dupErr != nil || res.Completed == total }, limit-(s.now-start))
	}
	for _, f := range open {
		res.Events = append(res.Events, history.Event{Session: f.op.ID.Session, Seq: f.op.ID.Seq,
			Level: f.op.Level, Kind: f.op.Kind, Key: f.op.Key, Value: f.op.Value, Invoke: int64(f.start)})
	}
	if dupErr != nil {
		return res, dupErr
	}
	if res.Completed != total {
		return res, fmt.Errorf("%d of %d operations completed by %v; %d still open: %s",
			res.Completed, total, s.now, len(open), describeOpen(open))
	}
	return res, nil
}

// Converged runs until every running replica applied the same index with
// the same state digest, or limit passes, and reports the states it saw.
func (s *Sim) Converged(limit time.Duration) (bool, []protocol.Status) {
	var sts []protocol.Status
	ok := s.RunUntil(func() bool {
		sts = sts[:0]
		for _, id := range s.replicas {
			if s.nodes[id].up {
				sts = append(sts, s.nodes[id].replica.Status())
			}
		}
		for _, st := range sts[1:] {
			if st.Applied != sts[0].Applied || st.Digest != sts[0].Digest {
				return false
			}
		}
		return true
	}, limit)
	return ok, sts
}

// Key names key i of a workload over n keys: the empty key for 0, so that
// every run has one, and otherwise "k" and i in as many digits as n-1
// takes, so that the names sort as the numbers do.
func Key(i, n uint64) string {
	if i == 0 {
		return ""
	}
	width := len(strconv.FormatUint(max(n, 1)-1, 10))
	return fmt.Sprintf("k%0*d", width, i)
}

// historyEvent turns a completion into a history event.
func historyEvent(f inflight, c clientcore.Completion, now time.Duration) history.Event {
	e := history.Event{Session: c.ID.Session, Seq: c.ID.Seq, Level: f.op.Level, Kind: f.op.Kind,
		Key: f.op.Key, Invoke: int64(f.start), Return: int64(now), Outcome: history.OK, Slot: c.FinalSlot()}
	switch {
	case f.op.Kind == wire.Put:
		e.Value = f.op.Value
	case f.op.Kind.HasProgram():
		e.Value, e.Result = f.op.Value, c.Value
	case !f.op.Kind.IsWrite():
		e.Found, e.Value = c.Found, c.Value
	}
	return e
}

// writtenKeys lists the keys the history wrote, in order: those of its
// puts and deletes, and of its transactions' puts and single-key deletes,
// in either branch. A range delete's other keys need no read back: a key
// that no put writes is absent throughout, and the others are here.
func writtenKeys(events []history.Event) []string {
	seen := make(map[string]bool)
	var keys []string
	add := func(key string) {
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	for i := range events {
		e := &events[i]
		switch {
		case e.Kind == wire.Txn:
			t, err := wire.DecodeTxn(e.Value)
			if err != nil {
				continue // not a program the workload drew
			}
			for _, ops := range [][]wire.TxnOp{t.Then, t.Else} {
				for _, o := range ops {
					if o.Kind == wire.Put || o.Kind == wire.Delete && o.End == "" {
						add(o.Key)
					}
				}
			}
		case e.Kind.IsWrite():
			add(e.Key)
		}
	}
	slices.Sort(keys)
	return keys
}

// describeOpen names up to five open operations, oldest first.
func describeOpen(open map[wire.OpID]inflight) string {
	ops := slices.SortedFunc(maps.Values(open), func(a, b inflight) int { return cmp.Compare(a.start, b.start) })
	var parts []string
	for _, f := range ops[:min(len(ops), 5)] {
		parts = append(parts, fmt.Sprintf("%d.%d %v %v key %q since %v",
			f.op.ID.Session, f.op.ID.Seq, f.op.Level, f.op.Kind, f.op.Key, f.start))
	}
	return strings.Join(parts, "; ")
}
