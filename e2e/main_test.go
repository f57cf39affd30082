package e2e

import (
	"os"
	"testing"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// parallelTests is how many of this package's parallel tests run at once
// when -parallel is not given: all of them. Each spends nearly all of its
// time waiting on the wall clock (a whole package run uses about a quarter
// of one core), so at the default (GOMAXPROCS, two here) they would wait
// on each other for nothing. The tests that a loaded machine would disturb
// are not parallel and still run alone.
const parallelTests = 16

func TestMain(m *testing.M) { os.Exit(testutil.MainParallel(m, parallelTests)) }
