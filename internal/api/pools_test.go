package api

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// twoPools is a vLLM fleet serving two models: llama-70b (named by the
// exposition's model) moving 2 req/s of 1 GB each, and qwen (named by a
// pool label over the exposition's model) moving 3 req/s of 0.5 GB each.
func twoPools(t *testing.T, cfg ledger.Config) *ledger.Ledger {
	t.Helper()
	cfg.Window = 5 * time.Second
	l := ledger.New(cfg)
	type inst struct {
		target    engine.Target
		model     string
		rps, bReq float64
	}
	ins := []inst{
		{engine.Target{Name: "llama-p0", Role: engine.Prefill, Engine: engine.VLLM}, "meta-llama/Llama-3.1-70B-Instruct", 2, 1e9},
		{engine.Target{Name: "llama-d0", Role: engine.Decode, Engine: engine.VLLM}, "meta-llama/Llama-3.1-70B-Instruct", 2, 0},
		{engine.Target{Name: "qwen-p0", Role: engine.Prefill, Engine: engine.VLLM, Labels: map[string]string{"ptd_pool": "qwen"}}, "Qwen/Qwen2.5-32B-Instruct", 3, 5e8},
		{engine.Target{Name: "qwen-d0", Role: engine.Decode, Engine: engine.VLLM, Labels: map[string]string{"pool": "qwen"}}, "Qwen/Qwen2.5-32B-Instruct", 3, 0},
	}
	var infos []engine.Target
	for _, in := range ins {
		in.target.URL = "http://10.0.0.1:8000/metrics"
		infos = append(infos, in.target)
	}
	l.SetTargets(infos)
	start := time.Now().Add(-20 * time.Second).Truncate(time.Second)
	for k := 0; k < 15; k++ {
		now := start.Add(time.Duration(k) * time.Second)
		for _, in := range ins {
			done := 100 + in.rps*float64(k)
			o := &engine.Observation{Engine: in.target.Engine, Role: in.target.Role, Model: in.model,
				Counters: []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: done}}}
			o.Gauges[engine.Running.GaugeIndex()], o.HasGauges[engine.Running.GaugeIndex()] = 4, true
			o.Gauges[engine.Waiting.GaugeIndex()], o.HasGauges[engine.Waiting.GaugeIndex()] = 1, true
			if in.bReq > 0 {
				o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.KVBytes, Series: 2, Value: in.bReq * done})
			}
			l.Record(ledger.Scrape{Target: in.target.Name, Time: now, Obs: o})
		}
		l.Tick(now.Add(500 * time.Millisecond))
	}
	return l
}

func TestSnapshotPools(t *testing.T) {
	type want struct {
		kv  map[string]float64 // pool → KV req/s (window); absent if not listed
		why map[string]string  // pool → part of the absent KV req/s' reason
		dep float64            // the deployment's KV req/s, -1 when absent
	}
	f := func(name string, cfg ledger.Config, w want) {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer((&Server{Ledger: twoPools(t, cfg)}).Handler())
			defer srv.Close()
			var snap struct {
				Point struct {
					KV struct {
						Window *float64          `json:"requests_per_second_window"`
						Absent map[string]string `json:"absent"`
					} `json:"kv"`
				} `json:"point"`
				Pools []struct {
					Name      string `json:"name"`
					Model     string `json:"model"`
					Instances int    `json:"instances"`
					KV        struct {
						Window *float64          `json:"requests_per_second_window"`
						Bytes  *float64          `json:"bytes_per_second_window"`
						Absent map[string]string `json:"absent"`
					} `json:"kv"`
					Prefill struct {
						Window *float64 `json:"requests_per_second_window"`
					} `json:"prefill"`
				} `json:"pools"`
				Verdict struct {
					Groups []struct {
						Group string `json:"group"`
					} `json:"groups"`
				} `json:"verdict"`
			}
			get(t, srv.URL+"/api/v1/snapshot", &snap)
			models := map[string]string{"meta-llama/Llama-3.1-70B-Instruct": "meta-llama/Llama-3.1-70B-Instruct", "qwen": "Qwen/Qwen2.5-32B-Instruct"}
			prefill := map[string]float64{"meta-llama/Llama-3.1-70B-Instruct": 2, "qwen": 3}
			if len(snap.Pools) != 2 {
				t.Fatalf("%d pools, want 2: %+v", len(snap.Pools), snap.Pools)
			}
			for i, p := range snap.Pools {
				if models[p.Name] != p.Model || p.Instances != 2 {
					t.Errorf("pool %q: model %q, %d instances; want %q, 2", p.Name, p.Model, p.Instances, models[p.Name])
				}
				if p.Prefill.Window == nil || math.Abs(*p.Prefill.Window-prefill[p.Name]) > 1e-9 {
					t.Errorf("pool %q: prefill %v req/s, want %g", p.Name, p.Prefill.Window, prefill[p.Name])
				}
				if g := snap.Verdict.Groups; len(g) != 2 || g[i].Group != p.Name {
					t.Errorf("verdict groups %+v, want one per pool in the pools' order", g)
				}
				kv, ok := w.kv[p.Name]
				switch {
				case ok && (p.KV.Window == nil || math.Abs(*p.KV.Window-kv) > 1e-9):
					t.Errorf("pool %q: KV %v req/s, want %g", p.Name, p.KV.Window, kv)
				case !ok && p.KV.Window != nil:
					t.Errorf("pool %q: KV %g req/s, want absent", p.Name, *p.KV.Window)
				case !ok && !strings.Contains(p.KV.Absent["requests_per_second_window"], w.why[p.Name]):
					t.Errorf("pool %q: KV absent because %q, want a reason with %q", p.Name, p.KV.Absent["requests_per_second_window"], w.why[p.Name])
				}
			}
			switch got := snap.Point.KV.Window; {
			case w.dep < 0 && got != nil:
				t.Errorf("deployment KV %g req/s, want absent", *got)
			case w.dep < 0 && snap.Point.KV.Absent["requests_per_second_window"] == "":
				t.Error("deployment KV absent without a reason")
			case w.dep >= 0 && (got == nil || math.Abs(*got-w.dep) > 1e-9):
				t.Errorf("deployment KV %v req/s, want %g (%v)", got, w.dep, snap.Point.KV.Absent)
			}
		})
	}
	llama := "meta-llama/Llama-3.1-70B-Instruct"
	f("each pool its own", ledger.Config{PoolRequests: map[string]kvsize.Request{
		llama: {Bytes: 1e9, Basis: kvsize.BasisConfig}, "qwen": {Bytes: 5e8, Basis: kvsize.BasisConfig}}},
		want{kv: map[string]float64{llama: 2, "qwen": 3}, dep: 5})
	// The one pool set: qwen's KV req/s is absent, never llama's number.
	f("one pool set", ledger.Config{PoolRequests: map[string]kvsize.Request{llama: {Bytes: 1e9, Basis: kvsize.BasisConfig}}},
		want{kv: map[string]float64{llama: 2}, why: map[string]string{"qwen": `pool "qwen" has no B_request of its own`}, dep: -1})
	// A pool's own beats the flag; the other pool is not given the flag's
	// number, some other model's.
	f("flag and one pool", ledger.Config{KVRequest: kvsize.Request{Bytes: 1e9, Basis: kvsize.BasisFlag},
		PoolRequests: map[string]kvsize.Request{"qwen": {Bytes: 5e8, Basis: kvsize.BasisConfig}}},
		want{kv: map[string]float64{"qwen": 3}, why: map[string]string{llama: `pool "meta-llama/Llama-3.1-70B-Instruct" has no B_request of its own`}, dep: -1})
	// Without pools: the one-pool flag serves every pool, as before pools,
	// and the deployment's KV req/s is all bytes over it.
	f("one flag, no pools", ledger.Config{KVRequest: kvsize.Request{Bytes: 1e9, Basis: kvsize.BasisFlag}},
		want{kv: map[string]float64{llama: 2, "qwen": 1.5}, dep: 3.5})
}

// TestAdvicePools: each pool's advice sizes for the pool's own arrival
// rate, its prefill completions (its queues hold steady), not the
// deployment's.
func TestAdvicePools(t *testing.T) {
	srv := httptest.NewServer((&Server{Ledger: twoPools(t, ledger.Config{})}).Handler())
	defer srv.Close()
	var body struct {
		Advice struct {
			Demand struct {
				Observed *float64 `json:"observed_requests_per_second"`
			} `json:"demand"`
		} `json:"advice"`
		Pools []struct {
			Pool   string `json:"pool"`
			Advice struct {
				Demand struct {
					Observed *float64 `json:"observed_requests_per_second"`
				} `json:"demand"`
			} `json:"advice"`
		} `json:"pools"`
	}
	get(t, srv.URL+"/api/v1/advice", &body)
	want := map[string]float64{"meta-llama/Llama-3.1-70B-Instruct": 2, "qwen": 3}
	if len(body.Pools) != len(want) {
		t.Fatalf("%d pools of advice, want %d", len(body.Pools), len(want))
	}
	for _, p := range body.Pools {
		if got := p.Advice.Demand.Observed; got == nil || math.Abs(*got-want[p.Pool]) > 1e-6 {
			t.Errorf("pool %q: arrival rate %v, want %g", p.Pool, got, want[p.Pool])
		}
	}
	if got := body.Advice.Demand.Observed; got == nil || math.Abs(*got-5) > 1e-6 {
		t.Errorf("deployment arrival rate %v, want 5", got)
	}
}

// TestPoolBottleneckMetric: /metrics has one ptd_pool_bottleneck_stage per
// pool, with the stage of the pool's verdict in the snapshot.
func TestPoolBottleneckMetric(t *testing.T) {
	srv := httptest.NewServer((&Server{Ledger: twoPools(t, ledger.Config{})}).Handler())
	defer srv.Close()
	var snap struct {
		Verdict struct {
			Groups []struct {
				Group string `json:"group"`
				Stage string `json:"stage"`
			} `json:"groups"`
		} `json:"verdict"`
	}
	get(t, srv.URL+"/api/v1/snapshot", &snap)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if len(snap.Verdict.Groups) != 2 {
		t.Fatalf("verdict groups %+v, want the two pools", snap.Verdict.Groups)
	}
	for _, g := range snap.Verdict.Groups {
		line := fmt.Sprintf("ptd_pool_bottleneck_stage{pool=%q,stage=%q} 1\n", g.Group, g.Stage)
		if !strings.Contains(string(body), line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if n := strings.Count(string(body), "ptd_pool_bottleneck_stage{"); n != 2 {
		t.Errorf("%d ptd_pool_bottleneck_stage series, want 2", n)
	}
}
