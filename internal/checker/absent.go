package checker

import (
	"fmt"

	"github.com/hybridkv/hybridkv/internal/history"
)

// absentReads checks S1 for the strong reads that found nothing on a key
// with deletes. Such a read read the initial state or some delete, and
// which one is not known, so the cluster check, which needs every value
// unique, cannot take it. Each is checked on its own against what any
// linearization needs: if a put took effect before the read (its span
// ended before the read was invoked), a delete must fall between the two,
// so some delete's span must end no earlier than the put was invoked and
// begin no later than the read returned. The put invoked last among those
// that ended before the read is the one to test: a delete that fits after
// it fits after the others.
//
// It never reports a history that linearizes; it misses violations that
// only several reads together show (two reads that each need the same
// delete, on either side of a put), which the cluster check would find
// were the deletes' values distinct.
func (l *lin) absentReads(key string, reads []int32) *Violation {
	h := l.h
	kw := h.keys[key]
	for _, r := range reads {
		ro := &h.ops[r]
		last := int32(-1)
		for _, x := range kw.byInv {
			xo := &h.ops[x]
			if xo.inv >= ro.inv {
				break // ends after it began, so after the read was invoked
			}
			if _, end := l.interval(x); !xo.del && end < ro.inv {
				last = x
			}
		}
		if last < 0 {
			continue // the initial state explains it
		}
		if !l.deleteFits(kw, h.ops[last].inv, ro.ret) {
			w := &h.ops[last]
			return &Violation{Property: "S1", Ops: []history.Event{*w.ev, *ro.ev}, Detail: fmt.Sprintf(
				"key %q: %v found nothing, but put %v took effect before it was invoked, and no delete of the key can take effect between them",
				key, ro.ev.ID(), w.ev.ID())}
		}
	}
	return nil
}

// deleteFits reports whether a delete of the key may take effect in
// [from, to].
func (l *lin) deleteFits(kw *keyWrites, from, to int64) bool {
	for _, d := range kw.dels {
		inv, end := l.interval(d)
		if inv > to {
			return false // the rest were invoked later still
		}
		if end >= from {
			return true
		}
	}
	return false
}
