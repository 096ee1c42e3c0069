package checker

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// The cluster check must agree with porcupine's exhaustive search on small
// histories, valid ones and ones with a read redirected at random.
func TestZonesAgreeWithPorcupine(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	bad, total, unknown := 0, 0, 0
	for seed := range uint64(2000) {
		c := genConfig{ops: 8 + rng.IntN(17), sessions: 2 + rng.IntN(3), pipeline: 1 + rng.IntN(3),
			writeShare: 0.2 + 0.5*rng.Float64(), weakShare: 0.5 * rng.Float64(), hotKeys: 1 + rng.IntN(2), keys: 1,
			hotShare: 0.9, seed: seed}
		events := generate(c)
		for range rng.IntN(3) {
			redirect(rng, events)
		}
		for i := range events {
			if events[i].IsWrite() && rng.IntN(10) == 0 {
				events[i].Outcome, events[i].Return = history.Unknown, 0
			}
		}
		r := Check(&history.File{Events: events}, Options{CrossCheck: true, LinearizabilityTimeout: 200 * time.Millisecond})
		require.NoError(t, r.Err)
		if r.S1Unknown { // porcupine gave up: no second opinion
			unknown++
			continue
		}
		for _, v := range r.Violations {
			require.NotContains(t, v.Detail, "CheckerDisagreement", "seed %d: %v", seed, events)
		}
		total++
		if strings.Contains(strings.Join(properties(r), ","), "S1") {
			bad++
		}
	}
	t.Logf("%d of %d histories not linearizable; porcupine timed out on %d more", bad, total, unknown)
	require.Less(t, unknown, total/50)
	require.Greater(t, bad, total/10)
	require.Less(t, bad, total*9/10)
}

// redirect makes a random read return another put's value on its key, or
// nothing.
func redirect(rng *rand.Rand, events []history.Event) {
	var reads []int
	for i := range events {
		if events[i].Kind == wire.Get {
			reads = append(reads, i)
		}
	}
	if len(reads) == 0 {
		return
	}
	r := &events[reads[rng.IntN(len(reads))]]
	var puts [][]byte
	for i := range events {
		if events[i].Kind == wire.Put && events[i].Key == r.Key {
			puts = append(puts, events[i].Value)
		}
	}
	if p := rng.IntN(len(puts) + 1); p < len(puts) {
		r.Value, r.Found = puts[p], true
	} else {
		r.Value, r.Found = nil, false
	}
}
