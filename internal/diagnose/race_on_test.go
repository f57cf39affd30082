//go:build race

package diagnose_test

// raceDetector: the race detector slows the read path some twentyfold, so
// the matrix runs a sample of its cells; scripts/test.sh also runs the
// whole matrix without it.
const raceDetector = true
