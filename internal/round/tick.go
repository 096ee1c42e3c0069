package round

import "time"

// TickDue takes the tick waiting on a ticker's channel, if one is: a loop
// woken by its inbox asks before its round, so that the round takes the
// tick too. Select draws among ready cases at random, and under a flood
// the inbox is always ready, so a loop that took ticks only when the draw
// fell on them would lose one round after round (a ticker keeps one), and
// with them heartbeats, election timers and a client's re-sends.
func TickDue(ticks <-chan time.Time) (time.Time, bool) {
	select {
	case now := <-ticks:
		return now, true
	default:
		return time.Time{}, false
	}
}
