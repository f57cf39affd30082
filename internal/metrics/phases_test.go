package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/metrics"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// TestPhaseCollector: over a simulated vLLM pool and an SGLang pool, each
// pool's timed phases and its measured TTFT are exported under the pool,
// equal to the pool's values at the ledger's newest point; a phase the
// pool's engines do not time (vLLM's bootstrap) has no series, not 0.
func TestPhaseCollector(t *testing.T) {
	sc, err := sim.LoadScenario("decode-bound")
	if err != nil {
		t.Fatal(err)
	}
	sc.Groups[1].Model = "Qwen/Qwen2.5-7B-Instruct"
	l, _, _, err := simtest.Run(sc, 5, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := l.Latest()
	if !ok || len(p.Pools) != 2 {
		t.Fatalf("%d pools at the newest point, want 2", len(p.Pools))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&metrics.PhaseCollector{Ledger: l})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{} // pool/phase → value; phase "ttft" for the measured TTFT
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			lv := map[string]string{}
			for _, lp := range m.Label {
				lv[lp.GetName()] = lp.GetValue()
			}
			if lv["window"] != "5s" {
				t.Errorf("%s %v: window %q, want 5s", mf.GetName(), lv, lv["window"])
			}
			phase := lv["phase"]
			if mf.GetName() == "ptd_pool_ttft_seconds" {
				phase = "ttft"
			}
			got[lv["pool"]+"/"+phase] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{}
	timed := map[string]int{}
	for _, pp := range p.Pools {
		for k, name := range ledger.PhaseNames {
			if n := *pp.Phases.Phase(k); n.OK() {
				want[pp.Name+"/"+strings.TrimSuffix(name, "_seconds")] = n.V
				timed[pp.Name]++
			}
		}
		if pp.Phases.TTFT.OK() {
			want[pp.Name+"/ttft"] = pp.Phases.TTFT.V
		}
		if timed[pp.Name] < 2 || !pp.Phases.TTFT.OK() {
			t.Errorf("pool %s: %d phases timed, TTFT %+v; the scenario times queue and prefill at least", pp.Name, timed[pp.Name], pp.Phases.TTFT)
		}
	}
	if len(got) != len(want) {
		t.Errorf("exported %d values, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (exported: %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if strings.HasSuffix(k, "/bootstrap") && !strings.Contains(strings.ToLower(k), "qwen") {
			t.Errorf("%s exported for a vLLM pool, which times no bootstrap", k)
		}
	}
}
