package ledger

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Two pools, each instance's counters growing at known rates: the pool's
// failure classes are those rates, their ratios the share of the transfers
// attempted, a class no source counts is absent with its reason, and a
// transfer library beside an engine's connector adds nothing (it counts
// the same transfers).
func TestPoolFailures(t *testing.T) {
	pool := func(name string) map[string]string { return map[string]string{LabelPool: name} }
	targets := []engine.Target{
		{Name: "a-p0", Role: engine.Prefill, Labels: pool("a")},
		{Name: "a-d0", Role: engine.Decode, Labels: pool("a")},
		{Name: "a-d0-nixl", Role: engine.Decode, Labels: pool("a")},
		{Name: "b-p0", Role: engine.Prefill, Labels: pool("b")},
	}
	// Per second: each counter's rate.
	rates := map[string]struct {
		e engine.Engine
		c map[engine.Metric]float64
	}{
		"a-p0": {engine.VLLM, map[engine.Metric]float64{engine.KVBytes: 1 << 30, engine.KVTransfers: 80, engine.KVFailNetwork: 12, engine.KVExpired: 4, engine.KVFailNotify: 4}},
		"a-d0": {engine.VLLM, map[engine.Metric]float64{engine.PromptTokens: 4000, engine.PromptTokensComputed: 480}},
		// The library's failures are the connector's, counted again.
		"a-d0-nixl": {engine.NIXLTelemetry, map[engine.Metric]float64{engine.KVBytes: 1 << 30, engine.KVTransfers: 80, engine.KVFailNetwork: 12}},
		"b-p0":      {engine.SGLang, map[engine.Metric]float64{engine.KVBytes: 1 << 20, engine.KVTransfers: 45, engine.KVFailTimeout: 5}},
	}
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets(targets)
	var p Point
	for s := 0.0; s <= 6; s++ {
		for _, tg := range targets {
			r := rates[tg.Name]
			o := &engine.Observation{Engine: r.e, Role: tg.Role}
			for m, v := range r.c {
				o.Counters = append(o.Counters, engine.CounterValue{Metric: m, Series: uint64(m) + 1, Value: 1000 + v*s})
			}
			l.Record(Scrape{Target: tg.Name, Time: at(s), Obs: o})
		}
		p = l.Tick(at(s))
	}
	a, ok := p.Pool("a")
	if !ok {
		t.Fatalf("no pool a in %+v", p.Pools)
	}
	b, ok := p.Pool("b")
	if !ok {
		t.Fatalf("no pool b in %+v", p.Pools)
	}
	fa, fb := a.Failures, b.Failures
	wantVal(t, "a transfers/s", fa.Transfers, 80)
	wantVal(t, "a network/s", fa.Network.PerSecond, 12)
	// 80 transfers + 16 failures attempted: the 4 lost notifications are
	// no failed transfer of their own (vLLM's NIXL counts them within its
	// failed transfers), so they are not added.
	wantVal(t, "a network ratio", fa.Network.Ratio, 0.125)
	wantVal(t, "a expiry ratio", fa.Expiry.Ratio, 4.0/96)
	wantVal(t, "a notification/s", fa.Notification.PerSecond, 4)
	wantVal(t, "a notification ratio", fa.Notification.Ratio, 4.0/96)
	wantAbsent(t, "a timeout", fa.Timeout.PerSecond, "SGLang does")
	wantAbsent(t, "a timeout ratio", fa.Timeout.Ratio, "SGLang does")
	wantAbsent(t, "a unclassified", fa.Unclassified.PerSecond, "without a class")
	wantVal(t, "a recomputed tokens/s", fa.Recomputed.PerSecond, 480)
	wantVal(t, "a recomputed ratio", fa.Recomputed.Ratio, 0.12)

	wantVal(t, "b timeout/s", fb.Timeout.PerSecond, 5)
	wantVal(t, "b timeout ratio", fb.Timeout.Ratio, 0.1)
	wantAbsent(t, "b network", fb.Network.PerSecond, "network failures")
	wantAbsent(t, "b recomputed", fb.Recomputed.PerSecond, "no decode instance")

	// The reasons survive the wire.
	raw, err := json.Marshal(fa)
	if err != nil {
		t.Fatal(err)
	}
	var back Failures
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	wantVal(t, "decoded network ratio", back.Network.Ratio, 0.125)
	wantAbsent(t, "decoded timeout", back.Timeout.PerSecond, "SGLang does")
}

// A pool whose only failing kind is 100% of transfers (the connector
// counts completed transfers only, and none completes) reads a ratio of 1,
// not an absent division by zero.
func TestPoolFailuresAllFailing(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill}})
	var p Point
	for s := 0.0; s <= 5; s++ {
		o := &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Counters: []engine.CounterValue{
			{Metric: engine.KVTransfers, Series: 1, Value: 7},
			{Metric: engine.KVFailNetwork, Series: 2, Value: 9 * s},
		}}
		l.Record(Scrape{Target: "p0", Time: at(s), Obs: o})
		p = l.Tick(at(s))
	}
	if len(p.Pools) != 1 {
		t.Fatalf("pools %+v, want one", p.Pools)
	}
	f := p.Pools[0].Failures
	wantVal(t, "transfers/s", f.Transfers, 0)
	wantVal(t, "network ratio", f.Network.Ratio, 1)
	wantAbsent(t, "recomputed", f.Recomputed.Ratio, "no decode instance")
}

// Load shed before the engine: a pool's routers and engines add their shed
// requests, whose share is of the offered load (served on decode + shed);
// a pool where nothing counts shedding has it absent with the reason,
// never 0; the router's own shed is on its RouterPoint.
func TestPoolShed(t *testing.T) {
	pool := func(name string) map[string]string { return map[string]string{LabelPool: name} }
	targets := []engine.Target{
		{Name: "a-epp", Role: engine.Router, Engine: engine.LLMDEPP, Labels: pool("a")},
		{Name: "a-p0", Role: engine.Prefill, Labels: pool("a")},
		{Name: "a-d0", Role: engine.Decode, Labels: pool("a")},
		{Name: "b-p0", Role: engine.Prefill, Labels: pool("b")},
		{Name: "b-d0", Role: engine.Decode, Labels: pool("b")},
	}
	rates := map[string]struct {
		e engine.Engine
		c map[engine.Metric]float64
	}{
		// 20 req/s arrive at the router, 3 of them shed there; the prefill
		// engine refuses 1 more at admission; decode completes 16.
		"a-epp": {engine.LLMDEPP, map[engine.Metric]float64{engine.RouterRequests: 20, engine.Shed: 3}},
		"a-p0":  {engine.VLLM, map[engine.Metric]float64{engine.Completed: 16, engine.Shed: 1}},
		"a-d0":  {engine.VLLM, map[engine.Metric]float64{engine.Completed: 16}},
		"b-p0":  {engine.SGLang, map[engine.Metric]float64{engine.Completed: 5}},
		"b-d0":  {engine.SGLang, map[engine.Metric]float64{engine.Completed: 5}},
	}
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets(targets)
	var p Point
	for s := 0.0; s <= 6; s++ {
		for _, tg := range targets {
			r := rates[tg.Name]
			o := &engine.Observation{Engine: r.e, Role: tg.Role}
			for m, v := range r.c {
				o.Counters = append(o.Counters, engine.CounterValue{Metric: m, Series: uint64(m) + 1, Value: 100 + v*s})
			}
			l.Record(Scrape{Target: tg.Name, Time: at(s), Obs: o})
		}
		p = l.Tick(at(s))
	}
	a, _ := p.Pool("a")
	b, _ := p.Pool("b")
	wantVal(t, "a shed/s", a.Failures.Shed.PerSecond, 4)
	wantVal(t, "a shed share of offered", a.Failures.Shed.Ratio, 4.0/20)
	wantVal(t, "a router shed/s", a.Router.Shed, 3)
	wantVal(t, "deployment router shed/s", p.Router.Shed, 3)
	wantAbsent(t, "b shed", b.Failures.Shed.PerSecond, "load shed before the engine")
	wantAbsent(t, "b shed ratio", b.Failures.Shed.Ratio, "load shed before the engine")
	wantAbsent(t, "b router shed", b.Router.Shed, "no router")
}
