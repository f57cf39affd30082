package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Each pool's router rates are exported with the pool, and nothing for a
// deployment without a router.
func TestRouterCollector(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second})
	gather := func() map[string][]*dto.Metric {
		reg := prometheus.NewRegistry()
		reg.MustRegister(&RouterCollector{Ledger: l})
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]*dto.Metric{}
		for _, mf := range mfs {
			out[mf.GetName()] = mf.Metric
		}
		return out
	}
	l.SetTargets([]engine.Target{{Name: "d0", Role: engine.Decode}, {Name: "epp", Engine: engine.LLMDEPP}})
	for s := 0; s <= 6; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		d := &engine.Observation{Engine: engine.VLLM, Role: engine.Decode, Model: "M",
			Counters: []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: float64(10 * s)}}}
		l.Record(ledger.Scrape{Target: "d0", Time: at, Obs: d})
		if s == 0 {
			l.Tick(at)
			if got := gather(); len(got) != 0 {
				t.Fatalf("without router samples: %v", got)
			}
			continue
		}
		r := &engine.Observation{Engine: engine.LLMDEPP, Role: engine.Router, Model: "M", Counters: []engine.CounterValue{
			{Metric: engine.RouterRequests, Series: 1, Value: float64(10 * s)},
			{Metric: engine.RouterDecodeOnly, Series: 2, Value: float64(4 * s)},
			{Metric: engine.RouterRemotePrefill, Series: 3, Value: float64(6 * s)},
		}}
		l.Record(ledger.Scrape{Target: "epp", Time: at, Obs: r})
		l.Tick(at)
	}
	got := gather()
	want := map[string]map[string]float64{
		"ptd_router_arrival_requests_per_second": {"": 10},
		"ptd_router_decisions_per_second":        {"remote_prefill": 6, "decode_only": 4},
	}
	for name, byDecision := range want {
		ms := got[name]
		if len(ms) != len(byDecision) {
			t.Errorf("%s: %d samples, want %d", name, len(ms), len(byDecision))
		}
		for _, m := range ms {
			labels := map[string]string{}
			for _, lp := range m.Label {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["pool"] != "M" || labels["window"] != "5s" || m.GetGauge().GetValue() != byDecision[labels["decision"]] {
				t.Errorf("%s: %v = %g", name, labels, m.GetGauge().GetValue())
			}
		}
	}
	if _, ok := got["ptd_router_rejections_per_second"]; ok {
		t.Error("rejections exported before the router counted an error")
	}
}
