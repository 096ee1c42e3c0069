package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// checkLinearizable checks S1 one key at a time (a register history is
// linearizable exactly when each key's is). A key's history holds its
// strong reads and all its puts, strong and weak:
//
//   - a strong op that completed keeps its real interval;
//   - a weak put, or a put of unknown outcome, may take effect at any
//     time after its invocation, so its interval ends only where causal
//     order forces it to (see latestPoints), or never;
//   - reads without a result are left out, and so are reads of a value no
//     put wrote (already reported as W6).
//
// A delete is a put of "absent", with a span like a put's. Keys without a
// strong read are skipped: puts alone always linearize. Because every put
// writes a distinct value, the decision is the polynomial cluster check
// (see zones), with each delete a cluster no read joins: a read that found
// nothing on a key with deletes may have read any of them, so it is
// checked apart (see absentReads). Porcupine's general search,
// exponential in the number of concurrent ops, cannot finish on a hot key
// of a pipelined benchmark. Porcupine draws the visualization of each
// failing key's culprits and, with Options.CrossCheck, searches every key
// as a second opinion.
func checkLinearizable(h *hist, o Options, rep *reporter) (unknown bool) {
	deadline := time.Now().Add(o.LinearizabilityTimeout)
	l := &lin{h: h, bound: latestPoints(h), model: kvModel(h)}
	byKey, absent := l.keys()
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var failed []Violation
	var shown []porcupine.Operation
	checked := 0
	for _, k := range keys {
		ops := byKey[k]
		checked += len(ops)
		v, culprits := l.zones(k, ops)
		if v != nil {
			failed = append(failed, *v)
			shown = append(shown, l.operations(culprits)...)
		}
		checked += len(absent[k])
		if v := l.absentReads(k, absent[k]); v != nil {
			failed = append(failed, *v)
		}
		if !o.CrossCheck {
			continue
		}
		left := time.Until(deadline)
		if left <= 0 {
			unknown = true
			continue
		}
		switch res := porcupine.CheckOperationsTimeout(l.model, l.operations(ops), left); {
		case res == porcupine.Unknown:
			unknown = true
		case (res == porcupine.Ok) != (v == nil):
			failed = append(failed, Violation{Property: "S1",
				Detail: fmt.Sprintf("CheckerDisagreement: on key %q porcupine finds %v, the cluster check linearizable=%v", k, res, v == nil)})
		}
	}
	rep.count(checked, "S1")
	failed = append(failed, l.logOrder()...)
	if o.VisualizePath != "" && len(shown) > 0 {
		note := "visualization in " + o.VisualizePath
		left := max(time.Until(deadline), time.Second)
		if res, info := porcupine.CheckOperationsVerbose(l.model, shown, left); res == porcupine.Unknown {
			note = "visualization timed out"
		} else if err := porcupine.VisualizePath(l.model, info, o.VisualizePath); err != nil {
			note = "visualization failed: " + err.Error()
		}
		for i := range failed {
			failed[i].Detail += "; " + note
		}
	}
	for _, v := range failed {
		rep.add(v)
	}
	return unknown
}

type lin struct {
	h     *hist
	bound []int64
	model porcupine.Model
}

// keys groups the ops S1 checks by key, for keys with a strong read. On a
// key with deletes, the strong reads that found nothing are grouped apart
// (absent): which delete each read is not known, so they leave the
// cluster check, which needs to know, for absentReads.
func (l *lin) keys() (byKey, absent map[string][]int32) {
	h := l.h
	byKey, absent = map[string][]int32{}, map[string][]int32{}
	for i := range h.ops {
		o := &h.ops[i]
		if !o.strong || o.write || o.rf == thinAir {
			continue
		}
		if kw := h.keys[o.key]; o.rf == notFound && kw != nil && len(kw.dels) > 0 {
			absent[o.key] = append(absent[o.key], int32(i))
			if _, ok := byKey[o.key]; !ok {
				byKey[o.key] = nil // the key's writes are still checked
			}
			continue
		}
		byKey[o.key] = append(byKey[o.key], int32(i))
	}
	for i := range h.ops {
		// A put that may take effect arbitrarily late and that no strong
		// read returned can always go last: leaving it out changes
		// nothing, and spares porcupine an op concurrent with everything.
		o := &h.ops[i]
		if ops, ok := byKey[o.key]; ok && o.write && (o.strong && o.ok || l.bound[i] != never) {
			byKey[o.key] = append(ops, int32(i))
		}
	}
	for _, ops := range byKey {
		slices.SortFunc(ops, func(a, b int32) int { return cmp.Compare(h.ops[a].inv, h.ops[b].inv) })
	}
	return byKey, absent
}

// interval returns the span in which op i may take effect.
func (l *lin) interval(i int32) (int64, int64) {
	o := &l.h.ops[i]
	if o.strong && o.ok {
		return o.inv, o.ret
	}
	return o.inv, l.bound[i]
}

type kvInput struct {
	key   string
	write bool
	del   bool
	w     int32 // a put's own index
}

type kvOutput struct {
	w int32 // a get's result: the put read, or notFound
}

func (l *lin) operations(ops []int32) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for p, i := range ops {
		o := &l.h.ops[i]
		call, ret := l.interval(i)
		out[p] = porcupine.Operation{ClientId: int(o.sess), Call: call, Return: ret,
			Input: kvInput{key: o.key, write: o.write, del: o.del, w: i}, Output: kvOutput{w: o.rf}}
	}
	return out
}

func kvModel(h *hist) porcupine.Model {
	name := func(w int32) string {
		if w < 0 {
			return "none"
		}
		return h.name(w)
	}
	return porcupine.Model{
		Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[string]int{}
			var parts [][]porcupine.Operation
			for _, op := range ops {
				k := op.Input.(kvInput).key
				p, ok := byKey[k]
				if !ok {
					p = len(parts)
					byKey[k] = p
					parts = append(parts, nil)
				}
				parts[p] = append(parts[p], op)
			}
			return parts
		},
		Init: func() any { return notFound },
		Step: func(state, in, out any) (bool, any) {
			if i := in.(kvInput); i.del {
				return true, notFound
			} else if i.write {
				return true, i.w
			}
			return out.(kvOutput).w == state.(int32), state
		},
		Hash: func(state any) uint64 { return uint64(uint32(state.(int32))) },
		DescribeOperation: func(in, out any) string {
			i := in.(kvInput)
			o := &h.ops[i.w]
			if i.write {
				return fmt.Sprintf("%v %v %v key %q", h.name(i.w), o.ev.Level, o.ev.Kind, i.key)
			}
			return fmt.Sprintf("%v %v get key %q -> value of %s", h.name(i.w), o.ev.Level, i.key, name(out.(kvOutput).w))
		},
		DescribeState: func(state any) string { return "value of " + name(state.(int32)) },
	}
}
