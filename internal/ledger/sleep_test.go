package ledger

import (
	"slices"
	"testing"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// An instance in vLLM's sleep mode is up and serves nothing on purpose:
// its stage counts it apart, in neither its instances nor those up, nor its
// sums, and KV does not count it; an instance with one engine awake, or an
// engine that does not say, serves.
func TestAsleepInstanceIsOutOfItsStage(t *testing.T) {
	type g = map[engine.Metric]float64
	f := func(name string, gauges g, wantSleep string) {
		t.Helper()
		l := newLedger(1 << 20)
		for s := 0; s < 6; s++ {
			at := at(float64(s))
			l.Record(Scrape{Target: "p0", Time: at, Obs: obs(engine.Prefill, float64(10*s), float64(10*s<<20), g{engine.Running: 4})})
			l.Record(Scrape{Target: "p1", Time: at, Obs: obs(engine.Prefill, float64(10*s), float64(10*s<<20), g{engine.Running: 4})})
			d := g{engine.Running: 0, engine.Waiting: 0, engine.KVUsage: 0}
			for m, v := range gauges {
				d[m] = v
			}
			// Decode stopped completing at 2 s, when it went to sleep.
			l.Record(Scrape{Target: "d0", Time: at, Obs: obs(engine.Decode, float64(20*min(s, 2)), 0, d)})
		}
		p := l.Tick(at(5))
		d0 := p.Instances[0]
		if d0.Target != "d0" || d0.Sleep != wantSleep || !d0.Up {
			t.Fatalf("%s: d0 (%s) sleep %q up %v, want sleep %q, up", name, d0.Target, d0.Sleep, d0.Up, wantSleep)
		}
		asleep := wantSleep != ""
		wantIn := 1
		if asleep {
			wantIn = 0
		}
		if p.Decode.Instances != wantIn || p.Decode.Up != wantIn || (len(p.Decode.Asleep) == 1) != asleep {
			t.Errorf("%s: decode instances %d up %d asleep %v, want %d, %d, asleep %v",
				name, p.Decode.Instances, p.Decode.Up, p.Decode.Asleep, wantIn, wantIn, asleep)
		}
		if asleep && !slices.Equal(p.Decode.Asleep, []string{"d0"}) {
			t.Errorf("%s: decode asleep %v, want [d0]", name, p.Decode.Asleep)
		}
		if asleep == p.Decode.Window.OK() {
			t.Errorf("%s: decode window %+v with d0 asleep %v", name, p.Decode.Window, asleep)
		}
		if p.KV.Instances != 2+wantIn {
			t.Errorf("%s: KV instances %d, want %d", name, p.KV.Instances, 2+wantIn)
		}
		if p.Prefill.Instances != 2 || p.Prefill.Up != 2 || len(p.Prefill.Asleep) != 0 {
			t.Errorf("%s: prefill %d/%d asleep %v, want 2 of 2, none asleep", name, p.Prefill.Up, p.Prefill.Instances, p.Prefill.Asleep)
		}
	}
	f("level 1", g{engine.EnginesAwake: 0, engine.EnginesWeightsOffloaded: 1, engine.EnginesDiscardAll: 0}, SleepWeightsOffloaded)
	f("level 2", g{engine.EnginesAwake: 0, engine.EnginesWeightsOffloaded: 0, engine.EnginesDiscardAll: 1}, SleepDiscardAll)
	f("two engines at both levels", g{engine.EnginesAwake: 0, engine.EnginesWeightsOffloaded: 1, engine.EnginesDiscardAll: 1}, SleepDiscardAll)
	f("not awake at any level", g{engine.EnginesAwake: 0}, SleepPaused)
	f("awake", g{engine.EnginesAwake: 1, engine.EnginesWeightsOffloaded: 0, engine.EnginesDiscardAll: 0}, "")
	f("one of two engines awake", g{engine.EnginesAwake: 1, engine.EnginesWeightsOffloaded: 1}, "")
	f("no sleep state", nil, "")
}
