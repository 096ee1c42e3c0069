// Package sim drives protocol cores over a virtual network in virtual time.
//
// One seed fixes everything: message delays and jitter, drops, duplicates,
// the phase of every node's tick, crash and restart points, and the cores'
// own election jitter. Every message is encoded and decoded with the wire
// codec on its way, as it would be on a socket, so cores never share memory.
// Delivery is FIFO per (sender, receiver) pair, as over one TCP connection;
// messages on different pairs reorder freely. A replica's disk takes
// simulated time to make a write durable (Config.DiskLatency), during which
// the replica goes on and what waits for the write stays back, as with the
// runtime's writer; a crash loses the writes not done.
package sim
