package main

import (
	"os"
	"testing"
)

// asPtdmon, set in a process's environment, makes this test binary ptdmon
// itself: the tests that need ptdmon in a process of its own (to kill it,
// say) run os.Args[0] with it rather than building the command.
const asPtdmon = "PTDMON_TEST_AS_PTDMON"

func TestMain(m *testing.M) {
	if os.Getenv(asPtdmon) == "1" {
		main()
	}
	os.Exit(m.Run())
}
