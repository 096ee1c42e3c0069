package transport

import (
	"fmt"
	"sync/atomic"
	"time"
)

// DelayModel gives the one-way delay a frame should suffer between two
// sites: a fixed matrix entry plus uniform jitter.
//
// Jitter perturbs only pairs with a nonzero base delay: a zero entry stands
// for a link the experiment treats as local, and jitter there would only add
// noise the modelled deployment does not have.
type DelayModel struct {
	oneWay [][]time.Duration
	jitter time.Duration
	// state drives a splitmix64 sequence; an atomic counter keeps Sample
	// lock-free while every connection's writer draws from it.
	state atomic.Uint64
}

// NewDelayModel builds a model from a square matrix of one-way delays,
// indexed [from][to], and a jitter: each sample is the base delay plus a
// uniform draw from [-jitter, +jitter], never below zero. The seed fixes the
// sequence of draws. The matrix is copied. It panics on a ragged matrix or a
// negative duration, which can only come from a broken configuration.
func NewDelayModel(oneWay [][]time.Duration, jitter time.Duration, seed uint64) *DelayModel {
	if jitter < 0 {
		panic(fmt.Sprintf("transport: negative jitter %v", jitter))
	}
	d := &DelayModel{oneWay: make([][]time.Duration, len(oneWay)), jitter: jitter}
	for i, row := range oneWay {
		if len(row) != len(oneWay) {
			panic(fmt.Sprintf("transport: delay matrix row %d has %d entries, want %d", i, len(row), len(oneWay)))
		}
		for j, v := range row {
			if v < 0 {
				panic(fmt.Sprintf("transport: negative delay %v from site %d to %d", v, i, j))
			}
		}
		d.oneWay[i] = append([]time.Duration(nil), row...)
	}
	d.state.Store(seed)
	return d
}

// Sites returns the number of sites the matrix covers.
func (d *DelayModel) Sites() int { return len(d.oneWay) }

// Base returns the configured delay between two sites without jitter; zero
// for a site outside the matrix.
func (d *DelayModel) Base(from, to uint32) time.Duration {
	if int(from) >= len(d.oneWay) || int(to) >= len(d.oneWay) {
		return 0
	}
	return d.oneWay[from][to]
}

// Sample draws the delay for one frame from site from to site to. It is safe
// for concurrent use.
func (d *DelayModel) Sample(from, to uint32) time.Duration {
	base := d.Base(from, to)
	if base == 0 || d.jitter == 0 {
		return base
	}
	span := uint64(2*d.jitter + 1)
	v := base + time.Duration(d.next()%span) - d.jitter
	return max(v, 0)
}

// next returns the following splitmix64 output.
func (d *DelayModel) next() uint64 { return splitmix64(&d.state) }

// splitmix64 advances state and returns its next output: a generator safe
// for concurrent senders without a lock.
func splitmix64(state *atomic.Uint64) uint64 {
	z := state.Add(0x9e3779b97f4a7c15)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
