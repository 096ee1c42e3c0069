// Package curpht is CURP-HT: CURP with a weak path that the witnesses never
// see ("transparent" to them).
//
// Strong operations are CURP's, unchanged. A weak write goes to the leader
// alone, which logs it like any operation and answers once it is committed
// and applied, with its slot: one round trip to the leader plus the commit.
// A weak read goes to the client's closest replica, which answers from its
// applied state with the value, the slot of the key's last write and its
// applied index, once that state reflects what the read's session has
// observed of the log (its floor; see the weakpath package): read-your-
// writes and monotonic reads hold even from a lagging replica. Weak writes
// are visible to others only once committed, because only committed state
// is ever read.
package curpht
