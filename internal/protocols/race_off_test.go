//go:build !race

package protocols_test

const raceDetector = false
