//go:build race

package transport

// raceDetector: under the race detector sync.Pool drops what it is given
// at random, so pooled buffers are not reused.
const raceDetector = true
