// Package node runs a replica core in a process, over the TCP transport.
//
// One goroutine owns the core and is the only one to touch it: it wakes
// when the transport's readers queued messages, a tick is due or the batch
// delay expired, runs a round (protocol.Loop, the same code the simulator
// runs) and hands what the core produced to the transport. The replica's
// disk writes are done by a second goroutine, its writer, which holds back
// what waits for them (see protocol.Ready), so the loop never stops for a
// sync. Client cores have a loop of their own in package client, on the
// same round code.
package node
