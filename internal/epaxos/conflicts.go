package epaxos

import (
	"github.com/google/btree"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// conflicts is what a replica knows of the commands it has not executed,
// by what they touch, and of the last command it executed on each key:
// enough to compute a new command's dependencies.
//
// Two operations conflict when they touch one key and one writes it; a
// scan conflicts with the writes in its range; a transaction with every
// operation; and all operations of one session with each other, so that a
// session's operations, retries included, apply in one order everywhere
// and its table of results stays identical on every replica.
//
// A command depends on every unexecuted conflicting command the replica
// knows and, per key, on the last conflicting write it executed there.
// That last one stands for every earlier write of the key: it was executed
// after them, so every replica executes it after them (their order is the
// same everywhere), and a command that depends on it comes later still.
// A committed, unexecuted write of the key stands for it in the same way.
// An executed transaction stands for every write before it in the same
// way, so executing one forgets each key's last write.
type conflicts struct {
	keys *btree.BTreeG[*keyEntry]
	// sessions holds each session's commands: they all write it.
	sessions map[uint64]*keyEntry
	// txns holds the transactions: they write everything.
	txns keyEntry
	// scans are the unexecuted scans, with their ranges.
	scans []pendingScan
}

// keyEntry is one key's (or session's) unexecuted commands and its last
// executed write.
type keyEntry struct {
	key       string
	lastWrite wire.Instance
	pending   []pending
}

type pending struct {
	id    wire.Instance
	write bool
}

type pendingScan struct {
	id   wire.Instance
	read wire.TxnOp
}

func newConflicts() *conflicts {
	return &conflicts{
		keys:     btree.NewG(32, func(a, b *keyEntry) bool { return a.key < b.key }),
		sessions: make(map[uint64]*keyEntry),
	}
}

// depSet gathers dependencies without duplicates.
type depSet struct {
	self wire.Instance
	// committed reports whether an instance is committed here.
	committed func(wire.Instance) bool
	seen      map[wire.Instance]struct{}
	list      []wire.Instance
}

func (d *depSet) add(id wire.Instance) {
	if id.Replica == 0 || id == d.self {
		return
	}
	if _, ok := d.seen[id]; ok {
		return
	}
	d.seen[id] = struct{}{}
	d.list = append(d.list, id)
}

// addEntry adds an entry's pending commands, or only its pending writes,
// and its last executed write unless a committed pending write stands for
// it. Leaving it out keeps replicas that executed different writes of a
// key from disagreeing on a command's dependencies for no reason, which
// would cost the fast path; it is safe because two committed conflicting
// commands are ordered by a path between them, and the one executed here
// first cannot depend on the other: the committed write depends on the
// executed one. An uncommitted write cannot stand for it: its own
// dependencies may leave the executed write out for the same reason.
func (d *depSet) addEntry(e *keyEntry, writesOnly bool) {
	if e == nil {
		return
	}
	standsFor := false
	for _, p := range e.pending {
		if p.write || !writesOnly {
			d.add(p.id)
		}
		standsFor = standsFor || p.write && p.id != d.self && d.committed(p.id)
	}
	if !standsFor {
		d.add(e.lastWrite)
	}
}

// deps returns the dependencies of command c of instance self, sorted;
// committed tells the instances committed here.
func (cf *conflicts) deps(self wire.Instance, c *wire.Command, committed func(wire.Instance) bool) []wire.Instance {
	d := depSet{self: self, committed: committed, seen: make(map[wire.Instance]struct{})}
	if c.Noop {
		return nil
	}
	for i := range c.Ops {
		op := &c.Ops[i]
		d.addEntry(cf.sessions[op.ID.Session], false)
		d.addEntry(&cf.txns, false)
		switch op.Kind {
		case wire.Put, wire.Delete:
			d.addEntry(cf.entry(op.Key), false)
			for _, s := range cf.scans {
				if s.read.Covers(op.Key) {
					d.add(s.id)
				}
			}
		case wire.Get:
			d.addEntry(cf.entry(op.Key), true)
		case wire.Scan:
			read, ok := wire.ScanRead(op)
			if !ok {
				continue
			}
			cf.inRange(read, func(e *keyEntry) { d.addEntry(e, true) })
		case wire.Txn:
			cf.keys.Ascend(func(e *keyEntry) bool { d.addEntry(e, false); return true })
			for _, s := range cf.scans {
				d.add(s.id)
			}
		}
	}
	sortInstances(d.list)
	return d.list
}

func (cf *conflicts) entry(key string) *keyEntry {
	e, _ := cf.keys.Get(&keyEntry{key: key})
	return e
}

// inRange calls fn with the entry of every key read covers.
func (cf *conflicts) inRange(read wire.TxnOp, fn func(*keyEntry)) {
	visit := func(e *keyEntry) bool { fn(e); return true }
	switch read.End {
	case "":
		if e := cf.entry(read.Key); e != nil {
			fn(e)
		}
	case wire.NoEnd:
		cf.keys.AscendGreaterOrEqual(&keyEntry{key: read.Key}, visit)
	default:
		cf.keys.AscendRange(&keyEntry{key: read.Key}, &keyEntry{key: read.End}, visit)
	}
}

func (cf *conflicts) entryFor(key string) *keyEntry {
	if e := cf.entry(key); e != nil {
		return e
	}
	e := &keyEntry{key: key}
	cf.keys.ReplaceOrInsert(e)
	return e
}

func (cf *conflicts) sessionEntry(s uint64) *keyEntry {
	e := cf.sessions[s]
	if e == nil {
		e = &keyEntry{}
		cf.sessions[s] = e
	}
	return e
}

// add registers an unexecuted command.
func (cf *conflicts) add(id wire.Instance, c *wire.Command) {
	if c.Noop {
		return
	}
	for i := range c.Ops {
		op := &c.Ops[i]
		s := cf.sessionEntry(op.ID.Session)
		s.pending = append(s.pending, pending{id, true})
		switch op.Kind {
		case wire.Put, wire.Delete, wire.Get:
			e := cf.entryFor(op.Key)
			e.pending = append(e.pending, pending{id, op.Kind != wire.Get})
		case wire.Scan:
			if read, ok := wire.ScanRead(op); ok {
				cf.scans = append(cf.scans, pendingScan{id, read})
			}
		case wire.Txn:
			cf.txns.pending = append(cf.txns.pending, pending{id, true})
		}
	}
}

// remove forgets an unexecuted command: it executed (executed set), or
// recovery replaced it with a no-op.
func (cf *conflicts) remove(id wire.Instance, c *wire.Command, executed bool) {
	if c.Noop {
		return
	}
	for i := range c.Ops {
		op := &c.Ops[i]
		s := cf.sessions[op.ID.Session]
		if s != nil {
			s.pending = dropPending(s.pending, id)
			if executed {
				s.lastWrite = id
			}
			if s.lastWrite.Replica == 0 && len(s.pending) == 0 {
				delete(cf.sessions, op.ID.Session)
			}
		}
		switch op.Kind {
		case wire.Put, wire.Delete, wire.Get:
			e := cf.entry(op.Key)
			if e == nil {
				continue
			}
			e.pending = dropPending(e.pending, id)
			if executed && op.Kind != wire.Get {
				e.lastWrite = id
			}
			if e.lastWrite.Replica == 0 && len(e.pending) == 0 {
				cf.keys.Delete(e)
			}
		case wire.Scan:
			cf.scans = dropScan(cf.scans, id)
		case wire.Txn:
			cf.txns.pending = dropPending(cf.txns.pending, id)
			if executed {
				cf.txns.lastWrite = id
				cf.forgetLastWrites()
			}
		}
	}
}

// forgetLastWrites drops every key's last write: an executed transaction
// stands for them now.
func (cf *conflicts) forgetLastWrites() {
	var empty []*keyEntry
	cf.keys.Ascend(func(e *keyEntry) bool {
		e.lastWrite = wire.Instance{}
		if len(e.pending) == 0 {
			empty = append(empty, e)
		}
		return true
	})
	for _, e := range empty {
		cf.keys.Delete(e)
	}
}

func dropPending(ps []pending, id wire.Instance) []pending {
	for i := range ps {
		if ps[i].id == id {
			return append(ps[:i], ps[i+1:]...)
		}
	}
	return ps
}

func dropScan(ss []pendingScan, id wire.Instance) []pendingScan {
	for i := range ss {
		if ss[i].id == id {
			return append(ss[:i], ss[i+1:]...)
		}
	}
	return ss
}

// lastWrites counts the keys whose last executed write is remembered.
func (cf *conflicts) lastWrites() int { return cf.keys.Len() }
