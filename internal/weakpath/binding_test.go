package weakpath

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// clock is a client clock whose replicas answer when told to.
type clock struct {
	now   uint64
	heard map[wire.NodeID]uint64
}

func (c *clock) Now() uint64     { return c.now }
func (c *clock) RetryTicks() int { return 50 }
func (c *clock) HeardSince(r wire.NodeID, t uint64) bool {
	at, ok := c.heard[r]
	return ok && at >= t
}

// advance moves time on by ticks, hearing from the replicas given at every
// tick.
func (c *clock) advance(ticks int, answering ...wire.NodeID) {
	for range ticks {
		c.now++
		for _, r := range answering {
			c.heard[r] = c.now
		}
	}
}

var three = []wire.NodeID{1, 2, 3}

// Reads that wait at their replica for their floor are retried; the
// replica answers everything else meanwhile and must stay bound. (The
// binding used to count every retry as a miss, so two slow reads in one
// period moved a client's every session to a remote replica, for good.)
func TestBindingStaysWhileTheReplicaAnswers(t *testing.T) {
	c := &clock{heard: make(map[wire.NodeID]uint64)}
	b := NewBinding(1)
	for range 20 {
		c.advance(50, 1, 2, 3)
		b.Missed(c, three)
		b.Missed(c, three)
		b.Missed(c, three)
	}
	require.Equal(t, wire.NodeID(1), b.Replica())
}

func TestBindingMovesOnWhenSilentAndBack(t *testing.T) {
	c := &clock{heard: make(map[wire.NodeID]uint64)}
	b := NewBinding(1)
	c.advance(100, 1, 2, 3)
	c.advance(60, 2, 3) // replica 1 goes silent
	for range 5 {
		b.Missed(c, three) // one period of silence, however many retries
	}
	require.Equal(t, wire.NodeID(1), b.Replica())
	c.advance(50, 2, 3)
	b.Missed(c, three)
	require.Equal(t, wire.NodeID(2), b.Replica(), "silent for two retry periods")

	b.Tick(c)
	require.Equal(t, wire.NodeID(2), b.Replica(), "the closest replica is still silent")
	c.advance(1, 1, 2, 3)
	b.Tick(c)
	require.Equal(t, wire.NodeID(1), b.Replica(), "back to the closest once it answers")
}
