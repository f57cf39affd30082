package ledger

import (
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// routerObs is a router's read at second s: counters growing at the given
// rates per second, gauges, and a TTFT histogram of n requests per second
// all at or below le.
func routerObs(eng engine.Engine, model string, s float64, rates map[engine.Metric]float64, gauges map[engine.Metric]float64, ttftLE, ttftPerSec float64) *engine.Observation {
	o := &engine.Observation{Engine: eng, Role: engine.Router, Model: model}
	for m, r := range rates {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: m, Series: uint64(m) + 1, Value: r * s})
	}
	for m, v := range gauges {
		o.Gauges[m.GaugeIndex()], o.HasGauges[m.GaugeIndex()] = v, true
	}
	if ttftPerSec > 0 {
		n := ttftPerSec * s
		o.Histograms[engine.TTFT.HistogramIndex()] = engine.Histogram{
			Buckets: []engine.Bucket{{UpperBound: ttftLE / 2, Count: 0}, {UpperBound: ttftLE, Count: n}, {UpperBound: math.Inf(1), Count: n}},
			Count:   n, HasCount: true, Present: true,
		}
	}
	return o
}

// Routers are summed for the deployment and pool by pool: each pool's
// arrival is its router's request counter, or, for a router that counts
// each request by its outcome, answered plus errors.
func TestRoutersByPool(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{
		{Name: "a-p", Role: engine.Prefill}, {Name: "a-d", Role: engine.Decode},
		{Name: "b-p", Role: engine.Prefill}, {Name: "b-d", Role: engine.Decode},
		{Name: "epp", Engine: engine.LLMDEPP}, {Name: "fe", Engine: engine.DynamoFrontend},
	})
	var p Point
	for s := 0.0; s <= 6; s++ {
		for _, e := range []struct {
			name, model string
			role        engine.Role
		}{{"a-p", "A", engine.Prefill}, {"a-d", "A", engine.Decode}, {"b-p", "B", engine.Prefill}, {"b-d", "B", engine.Decode}} {
			o := obs(e.role, 10*s, math.NaN(), nil)
			o.Model = e.model
			l.Record(Scrape{Target: e.name, Time: at(s), Obs: o})
		}
		l.Record(Scrape{Target: "epp", Time: at(s), Obs: routerObs(engine.LLMDEPP, "A", s,
			map[engine.Metric]float64{engine.RouterRequests: 40, engine.Errored: 2, engine.RouterDecodeOnly: 16, engine.RouterRemotePrefill: 24},
			map[engine.Metric]float64{engine.FrontendQueued: 5, engine.FrontendInflight: 30}, 0.4, 40)})
		l.Record(Scrape{Target: "fe", Time: at(s), Obs: routerObs(engine.DynamoFrontend, "B", s,
			map[engine.Metric]float64{engine.FrontendRequests: 10, engine.Errored: 1},
			map[engine.Metric]float64{engine.FrontendQueued: 2}, 0, 0)})
		p = l.Tick(at(s))
	}
	wantVal(t, "deployment arrival", p.Router.Arrival, 51)
	wantVal(t, "deployment rejections", p.Router.Rejected, 3)
	wantVal(t, "deployment queued", p.Router.Queued, 7)
	if p.Router.Instances != 2 || p.Router.Up != 2 {
		t.Errorf("deployment routers %d up %d, want 2 and 2", p.Router.Instances, p.Router.Up)
	}
	a, b := p.RouterOf("A"), p.RouterOf("B")
	wantVal(t, "A arrival", a.Arrival, 40)
	wantVal(t, "A rejections", a.Rejected, 2)
	wantVal(t, "A decode-only", a.DecodeOnly, 16)
	wantVal(t, "A remote prefill", a.RemotePrefill, 24)
	wantVal(t, "A inflight", a.Inflight, 30)
	if !a.TTFT.P50.OK() || a.TTFT.P50.V <= 0.2 || a.TTFT.P50.V > 0.4 {
		t.Errorf("A TTFT p50 = %+v, want in (0.2, 0.4]", a.TTFT.P50)
	}
	wantVal(t, "B arrival (answered + errors)", b.Arrival, 11)
	wantAbsent(t, "B decode-only", b.DecodeOnly, "no P/D decision")
	wantAbsent(t, "B inflight", b.Inflight, "no frontend_requests_inflight gauge")
	wantAbsent(t, "B TTFT", b.TTFT.P50, "TTFT")
	// The routers count in no stage, and split no pool by engine kind.
	wantVal(t, "prefill req/s", p.Prefill.Window, 20)
	if p.Prefill.Instances != 2 || p.Decode.Instances != 2 {
		t.Errorf("stage instances prefill %d decode %d, want 2 and 2", p.Prefill.Instances, p.Decode.Instances)
	}
	of := PoolOf(l.Meta())
	for _, ip := range p.Instances {
		want := map[string]string{"a-p": "A", "a-d": "A", "epp": "A", "b-p": "B", "b-d": "B", "fe": "B"}[ip.Target]
		if got := of(&ip); got != want {
			t.Errorf("pool of %s = %q, want %q", ip.Target, got, want)
		}
	}
}

// Without a router, the arrival and every router value are absent with the
// reason; a router without a model joins the one pool there is.
func TestRouterAbsentAndModelless(t *testing.T) {
	l := newLedger(0)
	var p Point
	for s := 0.0; s <= 3; s++ {
		l.Record(Scrape{Target: "p0", Time: at(s), Obs: obs(engine.Prefill, 10*s, 0, nil)})
		p = l.Tick(at(s))
	}
	wantAbsent(t, "arrival", p.Router.Arrival, WhyNoRouter)
	wantAbsent(t, "pool arrival", p.RouterOf("m").Arrival, WhyNoRouter)
	if len(p.Routers) != 0 {
		t.Errorf("routers by pool = %+v, want none", p.Routers)
	}

	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill}, {Name: "d0", Role: engine.Decode}, {Name: "vr", Engine: engine.VLLMRouter}})
	for s := 4.0; s <= 10; s++ {
		l.Record(Scrape{Target: "p0", Time: at(s), Obs: obs(engine.Prefill, 10*s, 0, nil)})
		l.Record(Scrape{Target: "d0", Time: at(s), Obs: obs(engine.Decode, 10*s, 0, nil)})
		l.Record(Scrape{Target: "vr", Time: at(s), Obs: routerObs(engine.VLLMRouter, "", s, map[engine.Metric]float64{engine.FrontendRequests: 12}, nil, 0, 0)})
		p = l.Tick(at(s))
	}
	// No error counter yet: the arrival is the answered requests.
	wantVal(t, "pool m arrival", p.RouterOf("m").Arrival, 12)
	wantAbsent(t, "pool m rejections", p.RouterOf("m").Rejected, "no error yet")
}

// Where only some pools have a router, the deployment's arrival rate is
// not the routers' sum: it is absent with the pools left out, and each
// pool keeps its own.
func TestDeploymentArrivalNeedsEveryPoolsRouter(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{{Name: "a-d", Role: engine.Decode}, {Name: "b-d", Role: engine.Decode}, {Name: "epp", Engine: engine.LLMDEPP}})
	var p Point
	for s := 0.0; s <= 6; s++ {
		for _, e := range []struct{ name, model string }{{"a-d", "A"}, {"b-d", "B"}} {
			o := obs(engine.Decode, 10*s, math.NaN(), nil)
			o.Model = e.model
			l.Record(Scrape{Target: e.name, Time: at(s), Obs: o})
		}
		l.Record(Scrape{Target: "epp", Time: at(s), Obs: routerObs(engine.LLMDEPP, "A", s, map[engine.Metric]float64{engine.RouterRequests: 10}, nil, 0, 0)})
		p = l.Tick(at(s))
	}
	wantAbsent(t, "deployment arrival", p.Router.Arrival, "pools without a router (B)")
	wantVal(t, "pool A arrival", p.RouterOf("A").Arrival, 10)
	wantAbsent(t, "pool B arrival", p.RouterOf("B").Arrival, WhyNoRouter)
}
