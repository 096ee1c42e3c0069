package checker

import (
	"fmt"
)

// checkVisibility checks C3 in the only form a history can show: commit
// times are not recorded, but slots are. A read from another session that
// returned a put's value must come from a state that included the put, so
// its Slot (the log position its answer reflects) is at least the put's,
// when both are known. A protocol that claims early strong visibility
// (guarantees.Claims.EarlyStrongVisibility: CURP-HO, where a strong read
// may legitimately return a weak put before the put is logged) has its
// strong reads exempted: earlyStrong.
func checkVisibility(h *hist, earlyStrong bool, rep *reporter) {
	checked := 0
	for i := range h.ops {
		r := &h.ops[i]
		if r.write || r.rf < 0 || r.slot == 0 || (r.strong && earlyStrong) {
			continue
		}
		w := &h.ops[r.rf]
		if w.sess == r.sess || w.slot == 0 {
			continue
		}
		checked++
		if r.slot < w.slot {
			rep.add(Violation{Property: "C3", Ops: h.report(int32(i), r.rf),
				Detail: fmt.Sprintf("%v returned %v's value from the state at slot %d, which cannot include it (logged at slot %d)",
					h.name(int32(i)), h.name(r.rf), r.slot, w.slot)})
		}
	}
	rep.count(checked, "C3")
}
