package round

import (
	"math"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Limits bound what one round takes of the clients' messages waiting. A
// round takes every replica's message but at most Clients of the
// clients', Chunk at a time with the replicas' that arrived meanwhile,
// and ends early once its driver's budget is spent (asked between
// chunks): raft's heartbeats, votes and acknowledgements, which all go
// out between rounds, must not wait behind a flood of client requests.
type Limits struct {
	Clients int
	Chunk   int
}

// Deployed are the limits package node runs with. At the tens of microseconds a
// request costs, a round of 4,096 stays within about a tenth of a second;
// the node's budget (5 ms of wall time) bounds it when requests cost
// more: unbounded, rounds of seconds under 3 x 256 sessions let election
// timeouts fire one after another, and so did 4,096 requests of hundreds
// of microseconds each (CURP-HO replicas holding thousands of weak writes
// no leader had logged yet).
var Deployed = Limits{Clients: 4096, Chunk: 16}

// Unlimited takes every message waiting.
var Unlimited = Limits{Clients: math.MaxInt, Chunk: math.MaxInt}

// Take steps into step the messages of one round from in: every
// replica's, the clients' within lim, stopping between chunks once spent
// (nil: never) reports true. It returns how many messages it stepped.
// What is left waits for the next round, whose wake-up the inbox posts.
func Take(in *Inbox, lim Limits, spent func() bool, step func(from wire.NodeID, m wire.Message)) int {
	n := 0
	for taken := 0; taken < lim.Clients; {
		msgs := in.TakeUpTo(min(lim.Chunk, lim.Clients-taken))
		for _, m := range msgs {
			if m.From.IsClient() {
				taken++
			}
			step(m.From, m.Msg)
		}
		n += len(msgs)
		if len(msgs) < lim.Chunk || spent != nil && spent() {
			break
		}
	}
	return n
}
