//go:build race

package curp

// raceDetector: the race detector slows the exhaustive replay check and
// the simulations many times over and finds nothing in them (each runs on
// one goroutine), so under it they run a sample of their histories and
// seeds; .ci/run runs them in full without it.
const raceDetector = true
