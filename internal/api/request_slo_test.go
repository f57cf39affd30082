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

// TestRequestSLOAgainstTruth serves a prefill-bound simulation of a vLLM
// pool (two legs: decode times only its own) and an SGLang pool (decode
// times from the arrival). The whole request's TTFT and E2E attainment must
// hold the simulator's true fraction of requests within the threshold,
// per pool and for the deployment, while the decode leg alone reads
// nearly every request within it. Behind llm-d's EPP, whose requests wait
// in its flow-control queue before either leg starts (0.4 s on average
// here) and which times no TTFT of its own, the bound adds the router's
// time to the legs.
func TestRequestSLOAgainstTruth(t *testing.T) {
	f := func(name, scenario string, th slo.Thresholds, decodeLegFar bool, routerDelay float64) {
		t.Run(name, func(t *testing.T) {
			requestSLOAgainstTruth(t, scenario, th, decodeLegFar, routerDelay)
		})
	}
	f("prefill-bound", "prefill-bound", slo.Thresholds{TTFT: 2, E2E: 20}, true, 0)
	f("balanced", "balanced", slo.Thresholds{TTFT: 1, E2E: 8}, false, 0)
	f("balanced behind a queueing router", "balanced", slo.Thresholds{TTFT: 1, E2E: 8}, false, 0.4)
}

func requestSLOAgainstTruth(t *testing.T, scenario string, th slo.Thresholds, decodeLegFar bool, routerDelay float64) {
	sc, err := sim.LoadScenario(scenario)
	if err != nil {
		t.Fatal(err)
	}
	legs, groups := slo.SourceLegs, []string{"vllm", "sglang"}
	if routerDelay > 0 {
		// The vLLM group alone, so that the router and the engines are
		// one pool: a router joins its model's pool, and a model served by
		// two engines is two pools.
		sc.Groups = sc.Groups[:1]
		sc.Groups[0].Router, sc.Groups[0].RouterDelay = string(engine.LLMDEPP), routerDelay
		legs, groups = slo.SourceRouterLegs, groups[:1]
	}
	const end = 90
	r, err := simtest.RunHistograms(sc, 1, end*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&Server{Ledger: r.Ledger, SLO: th}).Handler())
	defer srv.Close()
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	// truth is the fraction of the groups' requests within T among those
	// whose first token (TTFT) or end (E2E) fell in the window's last
	// five seconds, and their number.
	truth := func(name string, T float64, groups ...string) (float64, float64) {
		var in, n float64
		for _, g := range groups {
			ls, e2e := r.Model.RequestTruth(g)
			if name == "e2e" {
				ls = e2e
			}
			for _, q := range ls {
				if q.At <= (end-4)*time.Second || q.At > end*time.Second {
					continue
				}
				n++
				if q.Seconds <= T {
					in++
				}
			}
		}
		return in / n, n
	}
	check := func(what string, a *slo.Attainment, source string, groups ...string) {
		t.Helper()
		if a == nil {
			t.Fatalf("%s: no whole-request attainment", what)
		}
		for _, m := range a.Metrics {
			want, n := truth(m.Name, m.Threshold, groups...)
			lo, hi := math.NaN(), math.NaN()
			switch {
			case m.Within != nil:
				lo, hi = m.Within.Fraction, m.Within.Fraction
			case m.Bound != nil:
				lo, hi = m.Bound.Min, m.Bound.Max
			}
			// The window's edges and the legs' timing apart allow a few
			// requests either way.
			if !(lo-0.06 <= want && want <= hi+0.06) || !strings.Contains(m.Source, source) {
				t.Errorf("%s %s ≤ %gs: [%.3f, %.3f] from %q, truth %.3f of %.0f requests (want from %q)", what, m.Name, m.Threshold, lo, hi, m.Source, want, n, source)
				continue
			}
			t.Logf("%s %s ≤ %gs: [%.3f, %.3f] from %q, truth %.3f of %.0f requests", what, m.Name, m.Threshold, lo, hi, m.Source, want, n)
		}
	}
	var adv AdviceBody
	get("/api/v1/advice", &adv)
	if adv.SLO == nil {
		t.Fatalf("no SLO: %s", adv.SLOAbsent)
	}
	check("deployment", adv.SLO.Request, legs, groups...)
	// The decode leg alone says what the whole request does not.
	ttft, _ := truth("ttft", th.TTFT, groups...)
	if d := adv.SLO.Decode; decodeLegFar && (d == nil || d.Metrics[0].Within == nil || d.Metrics[0].Within.Fraction-ttft < 0.3) {
		t.Errorf("the decode leg's TTFT attainment should read far above the truth %.3f here: %+v", ttft, d)
	}
	var snap Snapshot
	get("/api/v1/snapshot?instances=0", &snap)
	seen := 0
	for _, p := range snap.Pools {
		if p.SLO == nil {
			t.Fatalf("pool %s: no SLO: %s", p.Name, p.SLOAbsent)
		}
		group := groups[0] // a pool named by its model alone
		if i := strings.LastIndex(p.Name, "("); i >= 0 {
			group = strings.TrimSuffix(p.Name[i+1:], ")")
		}
		switch group {
		case "vllm":
			check(p.Name, p.SLO.Request, legs, "vllm")
		case "sglang":
			check(p.Name, p.SLO.Request, slo.SourceArrival, "sglang")
		default:
			continue
		}
		seen++
		// Where its TTFT goes: the mean TTFT beside the phases is the
		// whole request's too.
		ttfts, _ := r.Model.RequestTruth(group)
		var sum, n float64
		for _, q := range ttfts {
			if q.At > (end-4)*time.Second && q.At <= end*time.Second {
				sum, n = sum+q.Seconds, n+1
			}
		}
		got := p.TTFTPhases.TTFT
		if !got.OK() || math.Abs(got.V-sum/n) > 0.15*sum/n {
			t.Errorf("%s: mean TTFT %+v from %q, truth %.3f s over %.0f requests", p.Name, got, p.TTFTPhases.TTFTSource, sum/n, n)
		} else {
			t.Logf("%s: mean TTFT %.3f s from %q, truth %.3f s; untimed %+v", p.Name, got.V, p.TTFTPhases.TTFTSource, sum/n, p.TTFTPhases.Untimed)
		}
	}
	if seen != len(groups) {
		t.Errorf("want the pools of %v, got %+v", groups, snap.Pools)
	}
}
