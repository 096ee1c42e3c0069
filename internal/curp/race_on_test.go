//go:build race

package curp

// raceDetector: the race detector slows the exhaustive replay check many
// times over and finds nothing in it (it runs on one goroutine), so under it
// the check draws a sample of its histories; .ci/run runs it in full
// without it.
const raceDetector = true
