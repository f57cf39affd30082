package gen

import (
	"testing"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// TestLatencyEngines: the latency panels draw exactly the adapters that opt
// in, each with its own histogram family, in the registry's order.
func TestLatencyEngines(t *testing.T) {
	for _, m := range []engine.Metric{engine.TTFT, engine.ITL, engine.E2E} {
		var want []latencyFamily
		for _, a := range engine.Adapters() {
			f, ok := a.Family(m, engine.KVAuto)
			if a.LatencyPanels && !ok {
				t.Errorf("%s opts in to latency panels but has no %s family", a.Engine, m)
			}
			if a.LatencyPanels && ok {
				want = append(want, latencyFamily{a.Display, f.Name})
			}
		}
		got := latencyEngines(m)
		if len(got) == 0 {
			t.Errorf("%s: no engine has latency panels", m)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: latency panels for %v, want %v", m, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: panel %d is %v, want %v", m, i, got[i], want[i])
			}
		}
	}
}
