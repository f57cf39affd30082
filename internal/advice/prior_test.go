package advice

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// A run starts from an earlier run of the same deployment: a capacity it
// learned saturated stands until this run saturates itself, even beside an
// estimate of its own; an earlier estimate gives way to this run's; a run
// that serves another model drops them, and says so.
func TestPriorCapacities(t *testing.T) {
	bound, err := sim.LoadScenario("prefill-bound") // the balanced deployment at 1.75× its load
	if err != nil {
		t.Fatal(err)
	}
	earlier := Learn(mustRun(t, bound, 120*time.Second), Options{})
	if earlier[0].Basis != BasisSaturated {
		t.Fatalf("the earlier run's prefill is %s, want saturated", earlier[0].Basis)
	}
	balanced, _ := sim.LoadScenario("balanced")
	now := mustRun(t, balanced, 40*time.Second)
	prior := &Prior{From: "run A", Models: []string{balanced.Model}, Capacities: earlier}

	caps := Learn(now, Options{Prior: prior})
	p := caps[0]
	if p.Basis != BasisEarlierRun || p.PerInstance != earlier[0].PerInstance || !strings.Contains(p.Evidence, "from run A, saturated there") {
		t.Errorf("prefill %+v, want the earlier run's %v", p, earlier[0].PerInstance)
	}
	if n := float64(instances(balanced, stage.Prefill)); !p.Total.OK() || math.Abs(p.Total.V-p.PerInstance.V*n) > 1e-9 {
		t.Errorf("prefill total %v at %g instances", p.Total, n)
	}
	// The balanced load is 6 of the 9 req/s its three instances carry.
	if !p.Utilisation.OK() || math.Abs(p.Utilisation.V-4.0/6) > 0.1 {
		t.Errorf("prefill utilisation %v of the earlier capacity, want about 0.67", p.Utilisation)
	}

	// An earlier estimate: this run's own stands.
	est := append([]Capacity(nil), earlier...)
	est[0].Basis, est[0].PerInstance = BasisBusy, ledger.Val(99)
	if p := Learn(now, Options{Prior: &Prior{From: "run A", Capacities: est}})[0]; p.Basis != BasisBusy || p.PerInstance.V == 99 {
		t.Errorf("prefill %s %v: this run's estimate, not the earlier one's, stands", p.Basis, p.PerInstance)
	}

	other := &Prior{From: "run B", Models: []string{"Qwen/Qwen2.5-7B-Instruct"}, Capacities: earlier}
	p = Learn(now, Options{Prior: other})[0]
	if p.Basis == BasisEarlierRun {
		t.Errorf("prefill from a run of another model: %s, %s", p.Basis, p.Evidence)
	}
	if d := Learn(now, Options{Prior: other})[2]; !strings.Contains(d.Evidence, "run B served Qwen/Qwen2.5-7B-Instruct, this run serves "+balanced.Model) {
		t.Errorf("decode's evidence does not say why the earlier run is not used: %s", d.Evidence)
	}
}

func mustRun(t *testing.T, sc sim.Scenario, d time.Duration) []ledger.Point {
	t.Helper()
	pts, _ := run(t, sc, 1, d)
	return pts
}
