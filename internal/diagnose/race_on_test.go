//go:build race

package diagnose_test

// raceDetector: the race detector slows the read path some twentyfold, so
// the simulated-deployment tests run a sample of their cells;
// scripts/test.sh also runs them whole without it.
const raceDetector = true
