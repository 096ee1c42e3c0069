package sim

import "github.com/hybridkv/hybridkv/internal/protocol"

// LoopStep is one thing a simulated replica's driver decided: what
// OnLoop reports.
type LoopStep struct {
	Kind LoopStepKind
	// Event is what woke a Round.
	Event protocol.Event
}

// LoopStepKind names a LoopStep.
type LoopStepKind uint8

const (
	// Round: the loop ran a round (protocol.Loop.Round).
	Round LoopStepKind = iota + 1
	// WriteTaken: the idle disk took the rounds waiting (WriteQueue.Take).
	WriteTaken
	// WriteDone: the disk finished them (Write.Do, then Loop.Written).
	WriteDone
)

func (s *Sim) onLoop(n *node, step LoopStep) {
	if s.OnLoop != nil {
		s.OnLoop(n.id, step)
	}
}
