// Package runtime runs protocol cores over the TCP transport.
//
// One goroutine owns a core and is the only one to touch it: it drains the
// messages the transport's readers queued, feeds them in, ticks the core on a
// wall-clock period, flushes the proposal batch when the batch delay expires,
// and hands what the core produced back to the transport. A replica's disk
// writes are done by a second goroutine, its writer, which holds back what
// waits for them (see protocol.Ready), so the loop never stops for a sync.
// The same loop serves replica cores (Replica) and client cores (package
// client).
package runtime
