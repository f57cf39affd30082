package testutil

import (
	"flag"
	"strconv"
	"testing"
)

// MainParallel runs m's tests with up to n parallel tests at once unless
// the command line gives -parallel, and returns m.Run's code; a package's
// TestMain calls it. For tests that spend their time waiting on the wall
// clock (external servers, simulated deployments, a browser's page): at
// the default, GOMAXPROCS, they would mostly wait on each other's waits.
func MainParallel(m *testing.M, n int) int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err) // the testing package's own flag: registered before TestMain
		}
	}
	return m.Run()
}
