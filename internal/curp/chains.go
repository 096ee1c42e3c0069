package curp

import (
	"github.com/hybridkv/hybridkv/internal/wire"
	"github.com/hybridkv/hybridkv/internal/witness"
)

// listChains answers chainHeld for every entry of one list in time linear
// in the list. Walking each entry's chain of previous weak writes anew
// costs the chain's length per entry: quadratic in a session's weak writes,
// and a pool of tens of thousands of them (a weak-only load while there is
// no leader) stalled a new leader's replay for seconds.
//
// For each entry it keeps whether its chain ends in done (or the session's
// first write) with every write on the way in the list, and the latest
// position among them: the chain is held before position p when both the
// first holds and that position is below p. That is chainHeld's answer
// exactly when every operation appears in the list once, as in a witness's
// records; a list with repeats walks the chain each time instead.
type listChains struct {
	list    []witness.Entry
	at      map[wire.OpID]int // each operation's last position
	done    func(wire.OpID) bool
	repeats bool
	// state is 0 until computed, then chainComplete or chainBroken; latest
	// is the latest position on a complete chain, -1 when it is empty.
	state  []uint8
	latest []int32
}

const (
	chainComplete uint8 = 1 + iota
	chainBroken
)

func newListChains(list []witness.Entry, done func(wire.OpID) bool) *listChains {
	c := &listChains{list: list, at: make(map[wire.OpID]int, len(list)), done: done}
	for i, e := range list {
		c.at[e.Op.ID] = i
	}
	c.repeats = len(c.at) != len(list)
	if !c.repeats {
		c.state = make([]uint8, len(list))
		c.latest = make([]int32, len(list))
	}
	return c
}

// heldBefore reports whether the list holds before position before (or
// done has) every earlier weak write of the session of the entry at i.
func (c *listChains) heldBefore(i, before int) bool {
	if c.repeats {
		return chainHeld(&c.list[i], c.list, c.at, before, c.done)
	}
	c.resolve(i)
	return c.state[i] == chainComplete && int(c.latest[i]) < before
}

// resolve fills in the entry at i, walking back only as far as the first
// entry already known, then filling in the walked entries from there.
func (c *listChains) resolve(i int) {
	var walked []int
	state, latest := chainComplete, int32(-1)
	for k := i; ; {
		if c.state[k] != 0 {
			state, latest = c.state[k], max(c.latest[k], int32(k))
			if len(walked) == 0 {
				return
			}
			break
		}
		walked = append(walked, k)
		prev := c.list[k].PrevWeak
		if prev == 0 {
			break
		}
		id := wire.OpID{Session: c.list[k].Op.ID.Session, Seq: prev}
		if c.done(id) {
			break
		}
		j, ok := c.at[id]
		if !ok {
			state = chainBroken
			break
		}
		k = j
	}
	// walked[n] has walked[n+1] as its previous weak write: its chain is
	// that entry and that entry's chain. latest already counts the entry
	// the walk stopped at, if known.
	for n := len(walked) - 1; n >= 0; n-- {
		k := walked[n]
		c.state[k], c.latest[k] = state, latest
		latest = max(latest, int32(k))
	}
}
