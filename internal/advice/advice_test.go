package advice

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// Below saturation nothing is learned: every capacity is absent with the
// reason, the lower bound is what each stage carried, and the advice gives
// only upper bounds on the counts.
func TestBalancedLearnsNothing(t *testing.T) {
	for _, name := range []string{"balanced", "restart"} {
		t.Run(name, func(t *testing.T) { learnsNothing(t, name) })
	}
}

// learnsNothing checks a scenario in which no stage saturates; "restart"
// takes instances down, which leaves their stage incomplete, not slow.
func learnsNothing(t *testing.T, name string) {
	sc, err := sim.LoadScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := run(t, sc, 1, 150*time.Second)
	caps := Learn(pts, Options{})
	for _, c := range caps {
		truth := trueCapacity(t, sc, c.Stage)
		switch {
		case c.Basis == BasisSaturated || c.Samples > 0:
			t.Errorf("%s: learned as saturated: %+v", c.Stage, c)
		case c.PerInstance.OK() && math.Abs(c.PerInstance.V-truth) > 0.15*truth:
			// Below saturation a capacity is an estimate, and a right one.
			t.Errorf("%s: estimated %v (%s), truth %g: %s", c.Stage, c.PerInstance, c.Basis, truth, c.Evidence)
		case !c.PerInstance.OK() && !strings.Contains(c.PerInstance.Why, "not known until "+string(c.Stage)+" saturates"):
			t.Errorf("%s: %v, want absent until it saturates", c.Stage, c.PerInstance)
		}
		if !c.AtLeast.OK() || c.AtLeast.V <= 0 || c.AtLeast.V > truth*1.1 {
			t.Errorf("%s: at least %v, truth %g", c.Stage, c.AtLeast, truth)
		}
	}
	// The scenarios give decode no batch limit: its estimate is absent and
	// says what would give one.
	if c := caps[2]; c.PerInstance.OK() || !strings.Contains(c.Utilisation.Why, "max_num_seqs") {
		t.Errorf("decode without a batch limit: %v, utilisation %v", c.PerInstance, c.Utilisation)
	}
	d := EstimateDemand(pts, 60*time.Second)
	a, err := Advise(caps, d, DefaultHeadroom)
	if err != nil {
		t.Fatal(err)
	}
	if a.Decode.Instances.OK() || !a.Decode.AtMost.OK() || a.Ratio.OK() || len(a.Short) != 0 {
		t.Errorf("advice without a decode capacity: %+v", a)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	dec := back["decode"].(map[string]any)
	if dec["instances"] != nil || !strings.Contains(dec["absent"].(map[string]any)["instances"].(string), "saturates") {
		t.Errorf("decode JSON: %s", b)
	}
}

func TestAdviseMath(t *testing.T) {
	cap := func(which stage.Stage, per float64, n int) Capacity {
		c := Capacity{Stage: which, Instances: n, PerInstance: ledger.Val(per), AtLeast: ledger.Absent("x")}
		if which == stage.KV {
			c.Bytes = ledger.Val(per * 1e9)
		}
		return c
	}
	caps := []Capacity{cap(stage.Prefill, 3, 2), cap(stage.KV, 8, 2), cap(stage.Decode, 5, 2)}
	f := func(rate, headroom, wantP, wantD, wantLinks float64, short string) {
		t.Helper()
		d := Demand{Target: ledger.Val(rate), BytesPerRequest: ledger.Val(1e9)}
		a, err := Advise(caps, d, headroom)
		if err != nil {
			t.Fatal(err)
		}
		if a.Prefill.Instances.V != wantP || a.Decode.Instances.V != wantD || a.KV.Links.V != wantLinks {
			t.Errorf("%g req/s at %g: P %v D %v links %v, want %g %g %g", rate, headroom, a.Prefill.Instances, a.Decode.Instances, a.KV.Links, wantP, wantD, wantLinks)
		}
		var got []string
		for _, s := range a.Short {
			got = append(got, string(s))
		}
		if got := strings.Join(got, ","); got != short {
			t.Errorf("%g req/s: short %q, want %q", rate, got, short)
		}
		if want := rate * 1e9 / (1 - headroom); math.Abs(a.KV.BytesPerSecond.V-want) > 1e-6*want {
			t.Errorf("KV bytes/s %v, want %g", a.KV.BytesPerSecond, want)
		}
	}
	f(6, 0, 2, 2, 1, "")                     // exactly the prefill capacity: no rounding up
	f(6, 0.2, 3, 2, 1, "prefill")            // 6/(3×0.8) = 2.5 → 3
	f(12, 0.2, 5, 3, 2, "prefill,decode")    // 12/2.4 = 5, 12/4 = 3, 12/6.4 → 2
	f(0.1, 0.5, 1, 1, 1, "")                 // never fewer than one
	f(20, 0.2, 9, 5, 4, "prefill,decode,kv") // 20/6.4 → 4 links
	// Decode unknown, bounded by what it carried: the ratio is bounded.
	half := append([]Capacity(nil), caps...)
	half[2] = Capacity{Stage: stage.Decode, Instances: 2, PerInstance: ledger.Absent("not known"), AtLeast: ledger.Val(2)}
	a, err := Advise(half, Demand{Target: ledger.Val(6), BytesPerRequest: ledger.Val(1e9)}, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if a.Ratio.OK() || a.RatioBound != "P:D ≥ 3:4 (decode at most 4)" {
		t.Errorf("ratio %v, bound %q", a.Ratio, a.RatioBound)
	}
	if _, err := Advise(caps, Demand{}, 1); err == nil {
		t.Error("headroom 1: want an error")
	}
	if _, err := Advise(caps[:2], Demand{}, 0.2); err == nil {
		t.Error("two capacities: want an error")
	}
}

func TestWithTarget(t *testing.T) {
	d := Demand{Observed: ledger.Val(4), Multiplier: 1, Target: ledger.Val(4)}
	f := func(mult, rate, want float64) {
		t.Helper()
		got, err := d.WithTarget(mult, rate)
		if err != nil || got.Target.V != want {
			t.Errorf("×%g rate %g: %v %v, want %g", mult, rate, got.Target, err, want)
		}
	}
	f(1.5, 0, 6)
	f(1, 9, 9)
	for _, bad := range [][2]float64{{0, 0}, {-1, 0}, {math.NaN(), 0}, {1, -2}, {1, math.Inf(1)}} {
		if _, err := d.WithTarget(bad[0], bad[1]); err == nil {
			t.Errorf("×%g rate %g: want an error", bad[0], bad[1])
		}
	}
	unknown := Demand{Observed: ledger.Absent("no points yet")}
	got, err := unknown.WithTarget(2, 0)
	if err != nil || got.Target.OK() || got.Target.Why != "no points yet" {
		t.Errorf("unknown ×2: %v %v", got.Target, err)
	}
}

func TestEstimateDemandEmpty(t *testing.T) {
	d := EstimateDemand(nil, time.Minute)
	if d.Observed.OK() || d.Target.OK() || d.BytesPerRequest.OK() {
		t.Errorf("%+v", d)
	}
}

// A tracker fed every 10 s keeps what it learned after the ledger's
// history (60 points here) has moved past it, and agrees with a learner
// run over every point.
func TestTrackerKeepsTheRun(t *testing.T) {
	sc, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	var tr *Tracker
	ticks := 0
	r, err := simtest.RunWith(sc, 1, 150*time.Second, simtest.Options{History: 60, OnTick: func(l *ledger.Ledger) {
		if tr == nil {
			tr = NewTracker(l, nil)
		}
		if ticks++; ticks%10 == 0 {
			if _, err := tr.Advise(Query{Headroom: -1}); err != nil {
				t.Fatal(err)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := tr.Advise(Query{Headroom: -1})
	if err != nil {
		t.Fatal(err)
	}
	all := Learn(r.Points, Options{})
	got, want := a.Capacities[0], all[0]
	if !got.PerInstance.OK() || got.PerInstance != want.PerInstance || got.Samples != want.Samples {
		t.Errorf("tracker %v (%d windows), learner over every point %v (%d)", got.PerInstance, got.Samples, want.PerInstance, want.Samples)
	}
	if held := Learn(r.Ledger.Since(time.Time{}), Options{}); held[0].Samples >= got.Samples {
		t.Errorf("the ledger's 60 points alone give %d windows, the tracker %d: nothing was kept beyond them", held[0].Samples, got.Samples)
	}
	if a.Headroom != DefaultHeadroom || a.Demand.Multiplier != 1 {
		t.Errorf("defaults: headroom %g multiplier %g", a.Headroom, a.Demand.Multiplier)
	}
}
