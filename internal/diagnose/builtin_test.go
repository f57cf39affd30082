package diagnose_test

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/sim"
)

// TestBuiltinScenarios checks the deployment verdict on every built-in
// scenario of `ptdmon sim` / `ptdmon demo` against the load model, at every
// checkpoint after the warm-up.
func TestBuiltinScenarios(t *testing.T) {
	for i, name := range sim.ScenarioNames() {
		if raceDetector && i%7 != 0 {
			continue // a sample under the race detector; scripts/test.sh runs all without it
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, err := sim.LoadScenario(name)
			if err != nil {
				t.Fatal(err)
			}
			want := verdictStage(sc.LoadModel().Bottleneck)
			n, ok := 0, 0
			r := run{sc: sc, seed: int64(7 + i), flaky: sc.Faults.TimeoutProb + sc.Faults.MalformedProb,
				duration: 120 * time.Second, warmUp: 45 * time.Second, every: 5 * time.Second}
			r.check = func(cp checkpoint) {
				n++
				if cp.verdict.Class == want {
					ok++
					return
				}
				t.Logf("%v: %s %q %q", cp.at, cp.verdict.Class, cp.verdict.Evidence, cp.verdict.Notes)
			}
			if err := r.do(); err != nil {
				t.Fatal(err)
			}
			if float64(ok) < 0.9*float64(n) {
				t.Errorf("verdict %s at %d of %d checkpoints", want, ok, n)
			}
		})
	}
}
