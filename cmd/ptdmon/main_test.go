package main

import (
	"os"
	"testing"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// asPtdmon, set in a process's environment, makes this test binary ptdmon
// itself: the tests that need ptdmon in a process of its own (to kill it,
// say) run os.Args[0] with it rather than building the command.
const asPtdmon = "PTDMON_TEST_AS_PTDMON"

// parallelTests is how many parallel tests run at once when -parallel is
// not given: all of them. TestKilledServeResumes waits on the wall clock
// for about two minutes, most of the package's time; at the default
// (GOMAXPROCS, two here) the others queue behind a slot it holds, and it
// may be the last to start.
const parallelTests = 16

func TestMain(m *testing.M) {
	if os.Getenv(asPtdmon) == "1" {
		main()
	}
	os.Exit(testutil.MainParallel(m, parallelTests))
}
