//go:build race

package protocols_test

// raceDetector: the race detector slows the single-threaded simulation
// several times over and finds nothing in it (a simulated cluster runs on
// one goroutine), so the seed-heavy tests run raceSeeds seeds per protocol
// (and size) under it; .ci/run runs them in full without it.
const raceDetector = true
