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
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// TestSnapshotPoolSLO: two pools, the vLLM one decode-bound and the SGLang
// one serving another model with room to spare. Each pool's attainment in
// /api/v1/snapshot equals the oracle's over its own decode instances'
// bucket increases only, and the two differ: a deployment-wide number
// would have hidden the pool that misses.
func TestSnapshotPoolSLO(t *testing.T) {
	sc, err := sim.LoadScenario("decode-bound")
	if err != nil {
		t.Fatal(err)
	}
	qwen := &sc.Groups[1]
	qwen.Model = "Qwen/Qwen2.5-7B-Instruct"
	qwen.Decode.MaxBatch, qwen.Decode.StepTime = 32, 25*time.Millisecond
	r, err := simtest.RunHistograms(sc, 1, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	th := slo.Thresholds{TTFT: 15, ITL: 0.05, E2E: 12}
	srv := httptest.NewServer((&Server{Ledger: r.Ledger, SLO: th}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/snapshot?instances=0")
	if err != nil {
		t.Fatal(err)
	}
	var snap Snapshot
	err = json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	// oracle is the fraction within T of the named group's decode
	// instances, and their completions/s.
	oracle := func(group string, m engine.Metric, T float64) (frac, rate float64) {
		var in, total float64
		for i, inst := range r.Instances {
			if inst.Role != sim.RoleDecode || !strings.HasPrefix(inst.Name, group+"-") {
				continue
			}
			h, ok := r.Increase(i, m, 86, 90)
			if !ok {
				continue
			}
			in += within(h, T)
			total += h.Count
		}
		return in / total, total / 4
	}
	groupOf := map[string]string{sc.Model: "vllm", qwen.Model: "sglang"}
	metrics := map[string]engine.Metric{"ttft": engine.TTFT, "itl": engine.ITL, "e2e": engine.E2E}
	thOf := map[string]float64{"ttft": th.TTFT, "itl": th.ITL, "e2e": th.E2E}
	e2e := map[string]float64{}
	for _, p := range snap.Pools {
		g, ok := groupOf[p.Name]
		if !ok {
			t.Errorf("pool %q: want one per model", p.Name)
			continue
		}
		if p.SLO == nil || p.SLO.Decode == nil {
			t.Errorf("pool %s: no attainment (%q)", p.Name, p.SLOAbsent)
			continue
		}
		_, rate := oracle(g, engine.E2E, 1)
		joint := 1.0
		for _, m := range p.SLO.Decode.Metrics {
			want, _ := oracle(g, metrics[m.Name], thOf[m.Name])
			if m.Within == nil || math.Abs(m.Within.Fraction-want) > 1e-12 {
				t.Errorf("pool %s: %s: %+v, want fraction %g", p.Name, m.Name, m, want)
				continue
			}
			joint *= want
			if m.Name == "e2e" {
				e2e[p.Name] = want
			}
		}
		if a := p.SLO.Decode; math.Abs(a.Rate-rate) > 1e-9 || math.Abs(a.Goodput-rate*joint) > 1e-9 {
			t.Errorf("pool %s: rate %g goodput %g, want %g and %g", p.Name, a.Rate, a.Goodput, rate, rate*joint)
		}
	}
	if len(e2e) != 2 || !(e2e[sc.Model] < e2e[qwen.Model]) {
		t.Errorf("E2E attainment by pool %v: want the decode-bound pool's below the other's", e2e)
	}

	// Without thresholds, each pool says why it has none.
	srv2 := httptest.NewServer((&Server{Ledger: r.Ledger}).Handler())
	defer srv2.Close()
	resp, err = http.Get(srv2.URL + "/api/v1/snapshot?instances=0")
	if err != nil {
		t.Fatal(err)
	}
	snap = Snapshot{}
	err = json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	if err != nil || len(snap.Pools) != 2 {
		t.Fatalf("%v: %d pools", err, len(snap.Pools))
	}
	for _, p := range snap.Pools {
		if p.SLO != nil || !strings.Contains(p.SLOAbsent, "no SLO threshold") {
			t.Errorf("pool %s without thresholds: %+v %q", p.Name, p.SLO, p.SLOAbsent)
		}
	}
}
