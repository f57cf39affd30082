package api

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// The snapshot's pool carries the pool's KV failures by class, read back
// with the API's own types: the rates the counters grew at, the share of
// the transfers attempted, and a class no source counts absent with why.
func TestSnapshotPoolFailures(t *testing.T) {
	l := ledger.New(ledger.Config{Window: 5 * time.Second})
	chat := map[string]string{"ptd_pool": "chat"}
	l.SetTargets([]engine.Target{
		{Name: "p0", URL: "http://10.0.0.1:8000/metrics", Role: engine.Prefill, Engine: engine.VLLM, Labels: chat},
		{Name: "d0", URL: "http://10.0.0.2:8000/metrics", Role: engine.Decode, Engine: engine.VLLM, Labels: chat},
	})
	start := time.Now().Add(-10 * time.Second).Truncate(time.Second)
	for k := 0; k < 8; k++ {
		now := start.Add(time.Duration(k) * time.Second)
		s := float64(k)
		prefill := &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Counters: []engine.CounterValue{
			{Metric: engine.KVTransfers, Series: 1, Value: 90 * s},
			{Metric: engine.KVFailNetwork, Series: 2, Value: 6 * s},
			{Metric: engine.KVExpired, Series: 3, Value: 4 * s},
		}}
		// 3 prefills a second of 0.4 s each.
		prefill.Histograms[engine.PrefillTime.HistogramIndex()] = engine.Histogram{
			Buckets: []engine.Bucket{{UpperBound: 1, Count: 3 * s}, {UpperBound: math.Inf(1), Count: 3 * s}},
			Sum:     1.2 * s, Count: 3 * s, HasSum: true, HasCount: true, Present: true}
		l.Record(ledger.Scrape{Target: "p0", Time: now, Obs: prefill})
		l.Record(ledger.Scrape{Target: "d0", Time: now, Obs: &engine.Observation{Engine: engine.VLLM, Role: engine.Decode, Counters: []engine.CounterValue{
			{Metric: engine.PromptTokens, Series: 1, Value: 5000 * s},
			{Metric: engine.PromptTokensComputed, Series: 2, Value: 1000 * s},
		}}})
		l.Tick(now.Add(500 * time.Millisecond))
	}
	srv := httptest.NewServer((&Server{Ledger: l}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap struct {
		Pools []Pool `json:"pools"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Pools) != 1 || snap.Pools[0].Name != "chat" {
		t.Fatalf("pools %+v, want chat alone", snap.Pools)
	}
	f := snap.Pools[0].KVFailures
	if f == nil {
		t.Fatal("the pool has no kv_failures")
	}
	want := func(what string, n ledger.Num, v float64) {
		t.Helper()
		if !n.OK() || n.V < v-1e-9 || n.V > v+1e-9 {
			t.Errorf("%s = %+v, want %v", what, n, v)
		}
	}
	want("transfers/s", f.Transfers, 90)
	want("network/s", f.Network.PerSecond, 6)
	want("network ratio", f.Network.Ratio, 0.06) // 6 of 90+6+4
	want("expiry ratio", f.Expiry.Ratio, 0.04)
	want("recomputed ratio", f.Recomputed.Ratio, 0.2)
	if f.Timeout.Ratio.OK() || !strings.Contains(f.Timeout.Ratio.Why, "timeouts") {
		t.Errorf("timeout ratio %+v, want absent: no source counts timeouts", f.Timeout.Ratio)
	}
	ph := snap.Pools[0].TTFTPhases
	if ph == nil {
		t.Fatal("the pool has no ttft_phases")
	}
	want("prefill phase", ph.Prefill, 0.4)
	if ph.Queue.OK() || !strings.Contains(ph.Queue.Why, "queue time") {
		t.Errorf("queue phase %+v, want absent: no source exports it", ph.Queue)
	}
}
