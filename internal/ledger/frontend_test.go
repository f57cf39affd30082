package ledger

import (
	"testing"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// A request router (Dynamo's frontend) plays no P/D role: its counters are
// kept and shown with the target, and it adds to no stage.
func TestFrontendInNoStage(t *testing.T) {
	l := newLedger(1 << 30)
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill}, {Name: "fe", Engine: engine.DynamoFrontend}})
	var p Point
	for s := 0.0; s <= 5; s++ {
		l.Record(Scrape{Target: "p0", Time: at(s), Obs: obs(engine.Prefill, 10*s, 0, nil)})
		fe := &engine.Observation{Engine: engine.DynamoFrontend, Counters: []engine.CounterValue{{Metric: engine.FrontendRequests, Series: 1, Value: 30 * s}}}
		fe.Gauges[engine.FrontendQueued.GaugeIndex()], fe.HasGauges[engine.FrontendQueued.GaugeIndex()] = 7, true
		l.Record(Scrape{Target: "fe", Time: at(s), Obs: fe})
		p = l.Tick(at(s))
	}
	wantVal(t, "prefill req/s", p.Prefill.Window, 10)
	if p.Prefill.Instances != 1 || p.Decode.Instances != 0 {
		t.Errorf("stage instances prefill %d decode %d, want 1 and 0", p.Prefill.Instances, p.Decode.Instances)
	}
	for _, st := range l.Targets(at(5)) {
		if st.Name != "fe" {
			continue
		}
		if st.Role != "" || st.Totals["frontend_requests"] != 150 || st.Gauges["frontend_requests_queued"] != 7 {
			t.Errorf("fe: role %q, totals %v, gauges %v", st.Role, st.Totals, st.Gauges)
		}
	}
}
