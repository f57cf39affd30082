//go:build !race

package diagnose_test

const raceDetector = false
