package advice

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// run drives the simulator through dur of simulated time and returns the
// ledger's points.
func run(t testing.TB, sc sim.Scenario, seed int64, dur time.Duration) ([]ledger.Point, *sim.Model) {
	t.Helper()
	_, pts, m, err := simtest.Run(sc, seed, dur)
	if err != nil {
		t.Fatal(err)
	}
	return pts, m
}
