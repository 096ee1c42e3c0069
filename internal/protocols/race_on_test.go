//go:build race

package protocols_test

// raceDetector: the race detector slows the single-threaded simulation
// several times over and finds nothing in it, so the seed-heavy tests run
// a sample under it; .ci/run also runs them in full without it.
const raceDetector = true
