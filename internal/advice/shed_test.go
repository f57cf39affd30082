package advice

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// A prefill-bound pool that caps its queue and sheds the rest: inferred
// from prefill alone the arrival rate is prefill's capacity; with the shed
// load added it is the simulator's offered load (arrivals = served + shed).
func TestDemandCountsShedLoad(t *testing.T) {
	sc, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	sc.Groups = sc.Groups[:1]
	sc.Groups[0].MaxQueued = 8
	_, pts, m, err := simtest.Run(sc, 4, 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lookback := 40 * time.Second
	view := ledger.PoolWindow(pts, ledger.PoolNames(pts)[0])
	d := EstimateDemand(view, lookback)
	end := int64(120 * time.Second)
	a, b := m.ShedTruth(sc.Groups[0].Name, end-int64(lookback)), m.ShedTruth(sc.Groups[0].Name, end)
	offered := float64(b.Offered-a.Offered) / lookback.Seconds()
	if b.Shed-a.Shed < 20 {
		t.Fatalf("the pool shed too little to tell: %+v → %+v", a, b)
	}
	t.Logf("offered %.2f req/s (%d shed); estimate %+v (%s)", offered, b.Shed-a.Shed, d.Observed, d.Basis)
	if !d.Observed.OK() || math.Abs(d.Observed.V-offered) > 0.1*offered {
		t.Errorf("estimated arrivals %+v, offered %.2f req/s", d.Observed, offered)
	}
	if !strings.HasSuffix(d.Basis, BasisShed) {
		t.Errorf("basis %q does not say the shed load is counted", d.Basis)
	}
}
