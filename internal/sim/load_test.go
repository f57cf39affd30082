package sim

import (
	"testing"
	"time"
)

// TestLoadModelAgainstRuns checks the load model against the model's own
// runs: the built-in scenarios' labels, and for a saturated stage, the
// measured throughput equals the computed capacity; an unsaturated
// deployment carries its arrival rate.
func TestLoadModelAgainstRuns(t *testing.T) {
	for _, name := range ScenarioNames() {
		t.Run(name, func(t *testing.T) {
			sc, err := LoadScenario(name)
			if err != nil {
				t.Fatal(err)
			}
			l := sc.LoadModel()
			if l.Bottleneck != sc.Bottleneck {
				t.Errorf("load model says %q, scenario is labelled %q", l.Bottleneck, sc.Bottleneck)
			}
			if len(sc.Restarts) > 0 {
				return
			}
			w := runWindow(t, sc, 1, 40*time.Second, 160*time.Second)
			_, _, rD := w.rates()
			var want float64
			for _, g := range l.Groups {
				if g.Bottleneck == StageNone {
					want += g.Rate
				} else {
					want += g.Stage(g.Bottleneck).CapacityPerSec
				}
			}
			if rD < 0.9*want || rD > 1.1*want {
				t.Errorf("decode completes %.2f req/s; the load model predicts %.2f", rD, want)
			}
		})
	}
}

func TestLoadModelStages(t *testing.T) {
	sc, _ := LoadScenario("balanced")
	l := sc.LoadModel()
	vl, sg := l.Groups[0], l.Groups[1]
	if vl.Gating != GatingDecodeSlot || sg.Gating != GatingPrealloc {
		t.Errorf("gating %q %q", vl.Gating, sg.Gating)
	}
	if sg.Stage(StageAdmission).CapacityPerSec == 0 || vl.Stage(StageAdmission).CapacityPerSec != 0 {
		t.Error("only the prealloc-first group has an admission stage")
	}
	// SGLang admission: 60 slots held ≥ 1/3 s prefill + 1/2 s copy + 257 × 25 ms.
	if got, want := sg.Stage(StageAdmission).CapacityPerSec, 60/(1.0/3+0.5+257*0.025); got < want*0.999 || got > want*1.001 {
		t.Errorf("admission capacity %.3f, want %.3f", got, want)
	}
	// Shrinking decode slots makes admission the bottleneck, not decode.
	sc.Groups[1].Decode.KVSlots = sc.Groups[1].Decode.MaxBatch
	sc.Groups[1].Rate = 4.8
	sc.Groups[1].Prefill.Instances = 2
	g := sc.LoadModel().Groups[1]
	if g.Bottleneck != StageAdmission {
		t.Errorf("bottleneck %q: %+v", g.Bottleneck, g.Stages)
	}
}
