package slo_test

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
)

func fromEngine(h engine.Histogram) slo.Hist {
	out := slo.Hist{Sum: h.Sum, Count: h.Count}
	for _, b := range h.Buckets {
		out.Bounds = append(out.Bounds, b.UpperBound)
		out.Counts = append(out.Counts, b.Count)
	}
	return out
}

// TestDominantPhaseInSimulator reads the phase histograms the simulated
// engines export over the last minute of a run and checks that the phase
// dominating the slowest tenth of requests is where the scenario is built
// to make them wait: the prefill queue when prefill saturates, the decode
// queue when decode does, and decoding itself when nothing saturates.
func TestDominantPhaseInSimulator(t *testing.T) {
	f := func(scenario, want string) {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			sc, err := sim.LoadScenario(scenario)
			if err != nil {
				t.Fatal(err)
			}
			r, err := simtest.RunHistograms(sc, 1, 180*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string][]slo.Hist{}
			add := func(name string, i int, m engine.Metric) {
				if h, ok := r.Increase(i, m, 120, 180); ok {
					parts[name] = append(parts[name], fromEngine(h))
				}
			}
			var e2e []slo.Hist
			for i, in := range r.Instances {
				add("kv_transfer", i, engine.KVXferTime)
				if in.Role == sim.RolePrefill {
					add("prefill_queue", i, engine.QueueTime)
					add("prefill", i, engine.PrefillTime)
					continue
				}
				add("decode_queue", i, engine.QueueTime)
				add("decode", i, engine.DecodeTime)
				if h, ok := r.Increase(i, engine.E2E, 120, 180); ok {
					e2e = append(e2e, fromEngine(h))
				}
			}
			phases := map[string]slo.Hist{}
			for name, hs := range parts {
				phases[name] = slo.Merge(hs...)
			}
			m := slo.Dominant(phases, 0.9)
			if m.Dominant != want {
				t.Errorf("dominant %q, want %q: %+v", m.Dominant, want, m.Phases)
			}
			a, err := slo.Attain(slo.Thresholds{E2E: 10}, slo.Input{E2E: e2e, Phases: phases, Seconds: 60})
			if err != nil {
				t.Fatal(err)
			}
			if a.Rate <= 0 || a.Metrics[0].Within == nil {
				t.Fatalf("attainment: %+v", a)
			}
			t.Logf("%s: E2E ≤ 10 s on decode %.3f of %.2f req/s; slowest tenth dominated by %s %+v", scenario, a.Metrics[0].Within.Fraction, a.Rate, m.Dominant, m.Phases)
		})
	}
	f("balanced", "decode")
	f("prefill-bound", "prefill_queue")
	f("decode-bound", "decode_queue")
}
