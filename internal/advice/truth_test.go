package advice

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// trueCapacity is one instance's saturated throughput (req/s) of stage in
// sc, from the scenario's own parameters; every group must agree, since the
// learner sees one pooled stage.
func trueCapacity(t *testing.T, sc sim.Scenario, which stage.Stage) float64 {
	t.Helper()
	var per float64
	for i, g := range sc.Groups {
		p, kv, d := g.CapacityPerEngine(sc)
		c := map[stage.Stage]float64{stage.Prefill: p * float64(g.Prefill.DP), stage.KV: kv * float64(g.Prefill.DP), stage.Decode: d * float64(g.Decode.DP)}[which]
		if i > 0 && c != per {
			t.Fatalf("groups differ in %s capacity: %g vs %g", which, c, per)
		}
		per = c
	}
	return per
}

// instances returns the stage's instance count summed over groups.
func instances(sc sim.Scenario, which stage.Stage) int {
	n := 0
	for _, g := range sc.Groups {
		if which == stage.Decode {
			n += g.Decode.Instances
		} else {
			n += g.Prefill.Instances
		}
	}
	return n
}

// setInstances spreads n instances of stage over the groups in proportion
// to their arrival rates, rounding each group up.
func setInstances(sc sim.Scenario, which stage.Stage, n float64) sim.Scenario {
	total := sc.TotalRate()
	gs := append([]sim.Group(nil), sc.Groups...)
	for i := range gs {
		k := int(math.Ceil(n*gs[i].Rate/total - 1e-9))
		if which == stage.Decode {
			gs[i].Decode.Instances = k
		} else {
			gs[i].Prefill.Instances = k
		}
	}
	sc.Groups = gs
	return sc
}

// TestCapacityAndAdviceAgainstTruth runs saturating scenarios in simulated
// time: the learned capacity of the saturated stage must be within 10% of
// the scenario's true capacity, the advice must be the smallest count that
// carries the true load at the headroom (±1), and the scenario re-run with
// the advised count must no longer be limited by that stage.
func TestCapacityAndAdviceAgainstTruth(t *testing.T) {
	const headroom = 0.2
	f := func(scenario string, which stage.Stage, seed int64, vllmOnly bool) {
		name := fmt.Sprintf("%s/seed%d", scenario, seed)
		if vllmOnly {
			name += "/vllm-only"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, err := sim.LoadScenario(scenario)
			if err != nil {
				t.Fatal(err)
			}
			if vllmOnly {
				// The vLLM group alone: no SGLang queue tells ready
				// decode requests from those waiting for their KV.
				sc.Groups = sc.Groups[:1]
			}
			pts, _ := run(t, sc, seed, 240*time.Second)
			caps := Learn(pts, Options{})
			idx := map[stage.Stage]int{stage.Prefill: 0, stage.KV: 1, stage.Decode: 2}[which]
			c := caps[idx]
			truth := trueCapacity(t, sc, which)
			if !c.PerInstance.OK() {
				t.Fatalf("%s capacity absent after 240 s: %s", which, c.PerInstance.Why)
			}
			if rel := math.Abs(c.PerInstance.V-truth) / truth; rel > 0.10 {
				t.Errorf("%s capacity %.3f req/s per instance, truth %.3f (%.1f%% off; evidence: %s)", which, c.PerInstance.V, truth, 100*rel, c.Evidence)
			}
			if c.StdErr.V > 0.05*truth {
				t.Errorf("%s stderr %.3f too wide for %d samples", which, c.StdErr.V, c.Samples)
			}
			// Any other stage's capacity is right too, or unknown with
			// the reason.
			for i, o := range caps {
				if i == idx {
					continue
				}
				if !o.PerInstance.OK() {
					if o.PerInstance.Why == "" || o.Samples >= 3 {
						t.Errorf("%s: absent without a reason: %+v", o.Stage, o)
					}
					continue
				}
				if tr := trueCapacity(t, sc, o.Stage); math.Abs(o.PerInstance.V-tr) > 0.1*tr {
					t.Errorf("%s (not the bottleneck) learned %.3f req/s per instance, truth %.3f: %s", o.Stage, o.PerInstance.V, tr, o.Evidence)
				}
			}

			lambda := sc.TotalRate()
			d := EstimateDemand(pts, 60*time.Second)
			if !d.Observed.OK() || math.Abs(d.Observed.V-lambda) > 0.15*lambda {
				t.Errorf("observed arrival rate %v, truth %.2f", d.Observed, lambda)
			}
			d, err = d.WithTarget(0, lambda)
			if err != nil {
				t.Fatal(err)
			}
			a, err := Advise(caps, d, headroom)
			if err != nil {
				t.Fatal(err)
			}
			advised := a.Prefill.Instances
			switch which {
			case stage.Decode:
				advised = a.Decode.Instances
			case stage.KV:
				advised = a.KV.Links
			}
			want := math.Ceil(lambda / (truth * (1 - headroom)))
			if !advised.OK() || math.Abs(advised.V-want) > 1 {
				t.Fatalf("advised %v for %s, smallest that carries %.2f req/s at %.0f%% headroom is %g", advised, which, lambda, 100*headroom, want)
			}
			// The bottleneck is short; any other stage named short really
			// is, at the headroom, by its true capacity (±1).
			short := map[stage.Stage]bool{}
			for _, st := range a.Short {
				short[st] = true
			}
			if advised.V <= float64(instances(sc, which)) || !short[which] {
				t.Errorf("advice names %v short, want %s among them (now %d)", a.Short, which, instances(sc, which))
			}
			for _, st := range []stage.Stage{stage.Prefill, stage.Decode} {
				if need := math.Ceil(lambda / (trueCapacity(t, sc, st) * (1 - headroom))); short[st] && need < float64(instances(sc, st)) {
					t.Errorf("%s named short, but %g instances carry %.2f req/s and there are %d", st, need, lambda, instances(sc, st))
				}
			}

			// Apply the advice and run again: the stage's rate meets the
			// arrival rate and its queue no longer grows.
			fixed := setInstances(sc, which, advised.V)
			if which == stage.KV {
				// The links belong to the prefill engines: give each one
				// its share of the advised bandwidth instead.
				fixed = sc
				fixed.Groups = append([]sim.Group(nil), sc.Groups...)
				per := a.KV.BytesPerSecond.V / float64(instances(sc, stage.Prefill))
				if need := lambda * float64(sc.KVBytesPerRequest) / (1 - headroom); math.Abs(a.KV.BytesPerSecond.V-need) > 0.01*need {
					t.Errorf("advised KV bandwidth %.4g B/s, want λ × B_request ÷ (1 − h) = %.4g", a.KV.BytesPerSecond.V, need)
				}
				for i := range fixed.Groups {
					fixed.Groups[i].Transfer.BandwidthBytesPerSec = per
				}
			}
			pts2, _ := run(t, fixed, seed, 200*time.Second)
			tail := pts2[100:]
			var rate float64
			for _, p := range tail {
				switch which {
				case stage.Decode:
					rate += p.Decode.Window.V
				case stage.KV:
					rate += p.KV.Window.V
				default:
					rate += p.Prefill.Window.V
				}
			}
			rate /= float64(len(tail))
			// Poisson arrivals over the 100 s: three standard deviations,
			// plus 2% for the window edges.
			if math.Abs(rate-lambda) > 3*math.Sqrt(lambda*100)/100+0.02*lambda {
				t.Errorf("with %g %s: %s rate %.2f req/s, arrivals %.2f", advised.V, which, which, rate, lambda)
			}
			caps2 := Learn(pts2, Options{})
			if caps2[idx].Samples > 0 && caps2[idx].Saturated > 30 {
				t.Errorf("with %g %s the stage was still saturated for %.0f s", advised.V, which, caps2[idx].Saturated)
			}
			first, last := pts2[100], pts2[len(pts2)-1]
			// Nothing queues up any more: requests held on prefill and
			// waiting on decode stay level over the last 100 s.
			pHeld := func(p ledger.Point) float64 { v, _ := heldOnPrefill(p.Prefill); return v }
			if pHeld(last) > pHeld(first)+20 || last.Decode.Waiting.V > first.Decode.Waiting.V+20 {
				t.Errorf("queues still grow: prefill %g → %g, decode waiting %g → %g", pHeld(first), pHeld(last), first.Decode.Waiting.V, last.Decode.Waiting.V)
			}
			t.Logf("%s: learned %.3f±%.3f req/s per instance (truth %.3f, %d windows); λ̂=%.2f (truth %.2f); advice %s %g (smallest %g), P:D %s; after: %.2f req/s",
				which, c.PerInstance.V, c.StdErr.V, truth, c.Samples, a.Demand.Observed.V, lambda, which, advised.V, want, a.RatioText, rate)
		})
	}
	for seed := int64(1); seed <= seeds; seed++ {
		vllmOnly := seed == 2
		f("prefill-bound", stage.Prefill, seed, vllmOnly)
		f("kv-bound", stage.KV, seed, vllmOnly)
		f("decode-bound", stage.Decode, seed, vllmOnly)
	}
}
