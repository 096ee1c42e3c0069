//go:build !race

package curp

const raceDetector = false
