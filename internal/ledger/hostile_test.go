package ledger

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// +Inf or NaN in a counter or gauge is absent with a reason: never NaN in a
// sum, never an error when the state is encoded as JSON.
func TestNonFiniteValuesAreAbsent(t *testing.T) {
	f := func(bad float64) {
		t.Helper()
		l := newLedger(1 << 30)
		for i := range 6 {
			s := float64(i)
			o := obs(engine.Prefill, 100+10*s, 0, map[engine.Metric]float64{engine.Running: 3})
			if i == 5 {
				o = obs(engine.Prefill, bad, 0, map[engine.Metric]float64{engine.Running: bad})
			}
			l.Record(Scrape{Target: "p0", Time: at(s), Obs: o})
			l.Record(Scrape{Target: "p1", Time: at(s), Obs: obs(engine.Prefill, 200+5*s, 0, nil)})
		}
		p := l.Tick(at(5.1))
		ip := instance(t, p, "p0")
		wantAbsent(t, "p0 instant", ip.Instant, "finite")
		wantAbsent(t, "p0 window", ip.Window, "finite")
		wantAbsent(t, "p0 running", ip.Running, "finite")
		// The stage is p1's 5 req/s plus nothing from p0: a number, not NaN.
		if !p.Prefill.Window.OK() || math.IsNaN(p.Prefill.Window.V) || math.IsInf(p.Prefill.Window.V, 0) {
			t.Errorf("prefill stage window = %+v", p.Prefill.Window)
		}
		if _, err := json.Marshal(l.Targets(at(5.1))); err != nil {
			t.Errorf("targets: %v", err)
		}
		if _, err := json.Marshal(p); err != nil {
			t.Errorf("point: %v", err)
		}
		notes := strings.Join(l.Targets(at(5.1))[1].Notes, "; ")
		if !strings.Contains(notes, "+Inf or NaN") {
			t.Errorf("p0 notes %q do not say why", notes)
		}
		// Back to finite: the counter's total was never poisoned.
		for i := 6; i < 12; i++ {
			s := float64(i)
			l.Record(Scrape{Target: "p0", Time: at(s), Obs: obs(engine.Prefill, 100+10*s, 0, nil)})
		}
		wantVal(t, "p0 window after", instance(t, l.Tick(at(11.1)), "p0").Window, 10)
	}
	f(math.Inf(1))
	f(math.Inf(-1))
}

func instance(t *testing.T, p Point, name string) InstancePoint {
	t.Helper()
	for _, ip := range p.Instances {
		if ip.Target == name {
			return ip
		}
	}
	t.Fatalf("no instance %s in %+v", name, p.Instances)
	return InstancePoint{}
}

// churn is an observation whose counter has n fresh label values.
func churn(scrapeNo, n int) *engine.Observation {
	o := obs(engine.Prefill, 100+float64(scrapeNo), 0, nil)
	for i := range n {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.PromptTokens, Series: uint64(1000 + scrapeNo*n + i), Value: 1})
	}
	return o
}

// Label values that churn every scrape neither grow the series state
// without bound nor take the target down.
func TestChurningSeriesAreEvicted(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, SeriesStaleAfter: 4, MaxSeries: 100_000})
	l.SetTargets([]TargetInfo{{Name: "p0", Role: engine.Prefill}})
	for i := range 50 {
		l.Record(Scrape{Target: "p0", Time: at(float64(i)), Obs: churn(i, 1000)})
	}
	n := len(l.targets["p0"].series)
	if n > 4*1000+2 { // the churning series of 4 scrapes, completed and KV bytes
		t.Errorf("%d series kept after 50 scrapes of 1000 new ones (stale after 4)", n)
	}
	st := l.Targets(at(50))[0]
	if !st.Up {
		t.Errorf("p0 down: %s", st.LastError)
	}
	wantVal(t, "p0 window", instance(t, l.Tick(at(49.5)), "p0").Window, 1)
}

// More series than the per-target limit: the scrape is rejected whole,
// with its reason, as Prometheus' sample_limit does.
func TestSeriesLimitRejectsTheScrape(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, MaxSeries: 500})
	l.SetTargets([]TargetInfo{{Name: "p0", Role: engine.Prefill}})
	l.Record(Scrape{Target: "p0", Time: at(0), Obs: churn(0, 100)})
	l.Record(Scrape{Target: "p0", Time: at(1), Obs: churn(1, 1000)})
	st := l.Targets(at(1))[0]
	if st.Up || st.Failures[scrape.ReasonSeriesLimit] != 1 || !strings.Contains(st.LastError, "500") {
		t.Errorf("up %v, failures %v, last error %q", st.Up, st.Failures, st.LastError)
	}
	if n := len(l.targets["p0"].series); n != 102 {
		t.Errorf("%d series kept; the rejected scrape must leave nothing", n)
	}
}
